"""Every prompt a rubric sends for one sample, by judge mode and scope: holistic items (prompt/compile.py),
checklist questions (scoring/checklist.py), transcripts (prompt/transcript.py)."""
from __future__ import annotations

import json

from rubriceval.data.sample import Sample
from rubriceval.prompt.checklist import compile_checklist
from rubriceval.prompt.compile import CompiledPrompt, compile_item
from rubriceval.prompt.transcript import compile_conversation_rubric
from rubriceval.rubric.schema import Rubric


def compile_rubric(rubric: Rubric, sample: Sample, *, structured: bool = True,
                   feedback_max_chars: int | None = None) -> list[CompiledPrompt]:
    if rubric.judge_mode != "holistic":     # one yes/no prompt per checklist question
        return [prompt for item in rubric.judge_items for prompt in compile_checklist(rubric, item, sample)]
    if rubric.is_conversation:     # transcript prompts
        return compile_conversation_rubric(rubric, sample, structured=structured,
                                           feedback_max_chars=feedback_max_chars)
    return [compile_item(rubric, item, sample, structured=structured, feedback_max_chars=feedback_max_chars)
            for item in rubric.judge_items]


def prompts_text(prompts: list[CompiledPrompt]) -> str:
    """The exact messages the judge receives, as `rubriceval compile` prints them and the studio previews them."""
    out: list[str] = []
    for prompt in prompts:
        out.append(f"===== item: {prompt.item_id}  (cache tag {prompt.cache_tag}) =====")
        for m in prompt.messages:
            out += [f"----- {m['role']} -----", m["content"]]
        if prompt.json_schema:
            out += ["----- response_format json_schema -----", json.dumps(prompt.json_schema, ensure_ascii=False)]
    return "\n".join(out)
