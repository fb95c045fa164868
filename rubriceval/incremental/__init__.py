"""Incremental evaluation of a growing source (a folder of daily exports, an appended JSONL file): only
conversations new or changed since the last increment are judged (watermark: conversation id + content hash), a
conversation whose last message is younger than the idle timeout waits for the next increment, a re-run judges
nothing, and each increment is a run with its period (state.py what is remembered, source.py what is read,
increment.py one increment)."""
