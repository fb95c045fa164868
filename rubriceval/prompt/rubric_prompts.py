"""Every prompt a rubric sends for one sample, by judge mode and scope: holistic items (prompt/compile.py),
checklist questions (scoring/checklist.py), transcripts (prompt/transcript.py)."""
from __future__ import annotations

from rubriceval.data.sample import Sample
from rubriceval.prompt.compile import CompiledPrompt, compile_item
from rubriceval.prompt.transcript import compile_conversation_rubric
from rubriceval.rubric.schema import Rubric
from rubriceval.scoring.checklist import compile_checklist


def compile_rubric(rubric: Rubric, sample: Sample, *, structured: bool = True,
                   feedback_max_chars: int | None = None) -> list[CompiledPrompt]:
    if rubric.judge_mode != "holistic":     # one yes/no prompt per checklist question
        return [prompt for item in rubric.judge_items for prompt in compile_checklist(rubric, item, sample)]
    if rubric.is_conversation:     # transcript prompts
        return compile_conversation_rubric(rubric, sample, structured=structured,
                                           feedback_max_chars=feedback_max_chars)
    return [compile_item(rubric, item, sample, structured=structured, feedback_max_chars=feedback_max_chars)
            for item in rubric.judge_items]
