"""The messages and JSON schema of each metric judge call for one sample, rendered from the templates and the
few-shot examples (prompts.py) through the one prompt environment."""
from __future__ import annotations

from typing import Any

from rubriceval.data.sample import Sample
from rubriceval.judge.ask import TemplateReask
from rubriceval.standard_metrics.call_plan import CALLS_VERSION, VERDICT_LABELS, CallKind, JudgeRequest
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.prompts import PromptLibrary
from rubriceval.standard_metrics.schemas import BOOLEAN, STRING, array_of, keyed, obj, validate, verdict_item


def _prune(verdict: dict, flags: tuple[str, ...]) -> dict:
    return {"reason": verdict["reason"], **{f: verdict[f] for f in flags}}


def _verdicts_schema(*flags: str) -> dict:
    return array_of(verdict_item(*flags))


def check_examples(data: dict, lang: str) -> list[str]:
    """Shape problems of a few-shot examples file (a team's replacement must keep the built-in shape)."""
    strings = array_of(STRING)

    def labelled(kind: CallKind, shown: dict[str, dict]) -> dict:
        verdict = {"type": "string", "enum": list(VERDICT_LABELS[kind.value][lang])}
        return array_of(obj({"question": STRING, **shown, "reason": STRING, "verdict": verdict}))

    schema = obj({
        CallKind.EXTRACT.value: obj({"question": STRING, "answer": STRING, "ground_truth": STRING,
                                     "answer_statements": strings, "ground_truth_statements": strings}),
        CallKind.REVERSE.value: array_of(obj({"answer": STRING, "questions": strings, "noncommittal": BOOLEAN})),
        CallKind.CONTEXTS.value: obj({
            "question": STRING, "contexts": strings, "ground_truth": STRING, "answer": STRING,
            "answer_statements": strings, "ground_truth_statements": strings,
            "context_verdicts": _verdicts_schema("relevant", "used"),
            "answer_statement_verdicts": _verdicts_schema("supported"),
            "ground_truth_statement_verdicts": _verdicts_schema("attributed")}),
        CallKind.CLASSIFY.value: obj({
            "question": STRING, "answer_statements": strings, "ground_truth_statements": strings,
            "answer_statement_verdicts": _verdicts_schema("in_ground_truth"),
            "ground_truth_statement_verdicts": _verdicts_schema("in_answer")}),
        CallKind.VALIDITY.value: labelled(CallKind.VALIDITY, {"answer": STRING}),
        CallKind.USEFULNESS.value: labelled(CallKind.USEFULNESS, {"contexts": strings}),
    })
    _, problems = validate(data, schema)
    if problems:
        return problems
    pairs = [(CallKind.CONTEXTS.value, "contexts", "context_verdicts"),
             (CallKind.CONTEXTS.value, "answer_statements", "answer_statement_verdicts"),
             (CallKind.CONTEXTS.value, "ground_truth_statements", "ground_truth_statement_verdicts"),
             (CallKind.CLASSIFY.value, "answer_statements", "answer_statement_verdicts"),
             (CallKind.CLASSIFY.value, "ground_truth_statements", "ground_truth_statement_verdicts")]
    problems = [f"{kind}.{verdicts}: {len(data[kind][verdicts])} verdicts for {len(data[kind][items])} {items}"
                for kind, items, verdicts in pairs if len(data[kind][items]) != len(data[kind][verdicts])]
    problems += [f"{CallKind.REVERSE.value}[{i}].questions: needs 5 questions, has {len(ex['questions'])}"
                 for i, ex in enumerate(data[CallKind.REVERSE.value]) if len(ex["questions"]) < 5]
    return problems


class RequestBuilder:
    """Renders each call's messages and JSON schema for one sample, in one language."""

    def __init__(self, sample: Sample, language: str, options: MetricOptions, library: PromptLibrary):
        self.sample = sample
        self.lang = language
        self.options = options
        self.library = library
        self.examples = library.examples(language, check=check_examples)

    def _request(self, kind: CallKind, schema: dict, part: str = "", **variables: Any) -> JudgeRequest:
        """`part` names one request of a call cut into several (call_modes.py): "answer", "c2" …"""
        return JudgeRequest(kind=f"{kind.value}/{part}" if part else kind.value,
                            messages=self.library.render(kind.value, self.lang, **variables),
                            json_schema=schema, schema_name=kind.value,
                            cache_tag=f"standard_metrics/{kind.value}/v{CALLS_VERSION}")

    def extract(self, want_answer: bool, want_ground_truth: bool, part: str = "") -> JudgeRequest:
        """Statements of the answer and/or the ground truth; the prompt shows only the texts it extracts from."""
        ex = self.examples["extract_statements"]
        props: dict[str, dict] = {}
        example_output: dict[str, Any] = {}
        if want_answer:
            props["answer_statements"] = array_of(STRING)
            example_output["answer_statements"] = ex["answer_statements"]
        if want_ground_truth:
            props["ground_truth_statements"] = array_of(STRING)
            example_output["ground_truth_statements"] = ex["ground_truth_statements"]
        return self._request(CallKind.EXTRACT, obj(props), part, want_answer=want_answer,
                             want_ground_truth=want_ground_truth, example={**ex, "output": example_output},
                             question=self.sample.question, answer=self.sample.answer if want_answer else "",
                             ground_truth=self.sample.ground_truth if want_ground_truth else "")

    def reverse(self) -> JudgeRequest:
        n = self.options.relevancy_questions
        examples = [{"answer": ex["answer"],
                     "output": {"questions": {f"q{i + 1}": q for i, q in enumerate(ex["questions"][:n])},
                                "noncommittal": ex["noncommittal"]}}
                    for ex in self.examples["reverse_questions"]]
        schema = obj({"questions": keyed("q", n, STRING), "noncommittal": BOOLEAN})
        return self._request(CallKind.REVERSE, schema, n=n, examples=examples, answer=self.sample.answer)

    def contexts(self, *, want_relevance: bool, want_use: bool, answer_statements: list[str],
                 ground_truth_statements: list[str], index: int | None = None) -> JudgeRequest | None:
        """The contexts judged in one request, or (`index`, from 0) only that context, shown as c1. None when
        nothing is left to ask (e.g. both statement lists came back empty)."""
        if not (want_relevance or want_use or answer_statements or ground_truth_statements):
            return None
        contexts = self.sample.contexts if index is None else [self.sample.contexts[index]]
        ex = self.examples["judge_contexts"]
        flags = tuple(f for f, on in (("relevant", want_relevance), ("used", want_use)) if on)

        def shown(x: dict, answer_stmts: list[str], gt_stmts: list[str]) -> dict:
            # The reference text is shown only when no reference statements stand for it; same for the answer.
            return {"question": x["question"], "contexts": x["contexts"],
                    "ground_truth": x["ground_truth"] if want_relevance and not gt_stmts else "",
                    "answer": x["answer"] if want_use and not answer_stmts else "",
                    "answer_statements": answer_stmts, "ground_truth_statements": gt_stmts}

        current = shown({"question": self.sample.question, "contexts": contexts,
                         "ground_truth": self.sample.ground_truth, "answer": self.sample.answer},
                        answer_statements, ground_truth_statements)
        example = shown(ex, ex["answer_statements"] if answer_statements else [],
                        ex["ground_truth_statements"] if ground_truth_statements else [])
        props: dict[str, dict] = {}
        example_output: dict[str, Any] = {}
        if flags:
            props["contexts"] = keyed("c", len(contexts), verdict_item(*flags))
            example_output["contexts"] = {f"c{i + 1}": _prune(v, flags)
                                          for i, v in enumerate(ex["context_verdicts"])}
        if answer_statements:
            props["answer_statements"] = keyed("s", len(answer_statements), verdict_item("supported"))
            example_output["answer_statements"] = {f"s{i + 1}": _prune(v, ("supported",))
                                                   for i, v in enumerate(ex["answer_statement_verdicts"])}
        if ground_truth_statements:
            props["ground_truth_statements"] = keyed("g", len(ground_truth_statements), verdict_item("attributed"))
            example_output["ground_truth_statements"] = {
                f"g{i + 1}": _prune(v, ("attributed",)) for i, v in enumerate(ex["ground_truth_statement_verdicts"])}
        return self._request(CallKind.CONTEXTS, obj(props), "" if index is None else f"c{index + 1}",
                             want_relevance=want_relevance, want_use=want_use,
                             contexts=contexts, answer_statements=answer_statements,
                             ground_truth_statements=ground_truth_statements, current=current,
                             example={**example, "output": example_output})

    def classify(self, answer_statements: list[str], ground_truth_statements: list[str]) -> JudgeRequest | None:
        """None when either side is empty: then every statement's class is known without asking."""
        if not answer_statements or not ground_truth_statements:
            return None
        ex = self.examples["classify_statements"]
        schema = obj({"answer_statements": keyed("s", len(answer_statements), verdict_item("in_ground_truth")),
                      "ground_truth_statements": keyed("g", len(ground_truth_statements),
                                                       verdict_item("in_answer"))})
        example_output = {
            "answer_statements": {f"s{i + 1}": _prune(v, ("in_ground_truth",))
                                  for i, v in enumerate(ex["answer_statement_verdicts"])},
            "ground_truth_statements": {f"g{i + 1}": _prune(v, ("in_answer",))
                                        for i, v in enumerate(ex["ground_truth_statement_verdicts"])}}
        current = {"question": self.sample.question, "answer_statements": answer_statements,
                   "ground_truth_statements": ground_truth_statements}
        return self._request(CallKind.CLASSIFY, schema, current=current, example={**ex, "output": example_output})

    def _labelled(self, kind: CallKind, **variables: Any) -> JudgeRequest:
        labels = VERDICT_LABELS[kind.value][self.lang]
        examples = [{**ex, "output": {"reason": ex["reason"], "verdict": ex["verdict"]}}
                    for ex in self.examples[kind.value]]
        schema = obj({"reason": STRING, "verdict": {"type": "string", "enum": list(labels)}})
        return self._request(kind, schema, examples=examples, **variables)

    def validity(self) -> JudgeRequest:
        return self._labelled(CallKind.VALIDITY, question=self.sample.question, answer=self.sample.answer)

    def usefulness(self) -> JudgeRequest:
        return self._labelled(CallKind.USEFULNESS, question=self.sample.question, contexts=self.sample.contexts)

    def reask(self) -> TemplateReask:
        """The one re-ask after output that breaks the schema (`<lang>/reask.j2`, listing the problems)."""
        return TemplateReask(template=self.library.template("reask", self.lang))

