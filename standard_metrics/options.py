"""Every knob of the standard metrics, validated once at the boundary."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rubriceval.standard_metrics.agent_options import AgentOptions
from rubriceval.standard_metrics.call_modes import ContextCalls, Extraction, Support
from rubriceval.standard_metrics.sql.options import SqlOptions
from rubriceval.standard_metrics.text import RougeTokenizer, SimilarityMeasure


class MetricOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # None → each sample's own language (Sample.language: CJK in question/answer → zh).
    language: Literal["zh", "en"] | None = None
    # A folder searched before the built-in templates: put zh/extract_statements.j2 or zh/examples.yaml there
    # to replace one prompt or its few-shot examples (see standard_metrics/templates/README.md).
    template_dir: str | None = None

    # answer_correctness = (w_sem·similarity + w_fact·F_beta) / (w_sem + w_fact); Ragas defaults 0.25 / 0.75.
    semantic_weight: float = Field(default=0.25, ge=0)
    factual_weight: float = Field(default=0.75, ge=0)
    factual_beta: float = Field(default=1.0, gt=0)

    # answer_relevancy: how many questions the judge writes back from the answer.
    relevancy_questions: int = Field(default=3, ge=1, le=5)

    # Non-LLM context precision/recall.
    nonllm_threshold: float = Field(default=0.5, ge=0, le=1)
    nonllm_measure: SimilarityMeasure = "levenshtein"

    # String metrics.
    bleu_tokenize: str | None = None          # None → 'zh' when either text has CJK, else '13a'
    rouge_tokenizer: RougeTokenizer = "char"  # CJK per character, or 'jieba' words

    # Re-ask once, with the validation problems, when the judge's JSON misses fields.
    reask_invalid: bool = True

    # How the shared calls are cut into requests (standard_metrics/call_modes.py); None → the judge's measured
    # default. split: statements of each text from a prompt showing that text alone (no leak between them).
    extraction: Extraction | None = None
    context_calls: ContextCalls | None = None
    support: Support | None = None       # judge | judge_and_text: a "supported" must be borne out by the text
    # Keep only extracted statements found in their own text, not questions or greetings (grounding.py).
    statement_grounding: bool = True
    # Non-LLM context match of structured rows: the fields that identify a row (None → its first field).
    nonllm_key_fields: list[str] | None = None
    # A run asking for context_recall/context_precision on samples with reference contexts also computes the
    # non-LLM twin, flagged where they disagree (rubriceval/run/cross_check.py); False: `--no-cross-check`.
    cross_check: bool = True

    # NL2SQL metrics (datacompy_score, llm_sql_equivalence): database, statement timeout, row cap, compare mode.
    sql: SqlOptions = Field(default_factory=SqlOptions)

    # Agent metrics (tool_call_accuracy, topic_adherence): argument comparison, call order, topic score.
    agent: AgentOptions = Field(default_factory=AgentOptions)

    # Pass thresholds per metric name (standard_metrics/thresholds.py has the defaults): a verdict's `passed`.
    thresholds: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _weights_not_both_zero(self) -> MetricOptions:
        if self.semantic_weight + self.factual_weight <= 0:
            raise ValueError("semantic_weight and factual_weight cannot both be 0")
        return self

    @classmethod
    def coerce(cls, options: MetricOptions | dict[str, Any] | None) -> MetricOptions:
        if options is None:
            return cls()
        if isinstance(options, cls):
            return options
        return cls.model_validate(options)
