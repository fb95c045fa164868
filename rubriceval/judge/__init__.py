from rubriceval.judge.config import JudgeConfig
from rubriceval.judge.client import JudgeClient, JudgeResponse, CallStats
from rubriceval.judge.parser import parse_judge_output, ParsedOutput

__all__ = ["JudgeConfig", "JudgeClient", "JudgeResponse", "CallStats", "parse_judge_output",
           "ParsedOutput"]
