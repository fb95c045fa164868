"""Can the judge be trusted? Agreement between the LLM judge and human experts, and among the experts.

agreement.py       — kappa / correlations / Krippendorff's alpha / Fleiss' kappa with bootstrap CIs.
benchmark_data.py  — public human-labelled benchmarks (SummEval consistency, HaluEval) as Samples.
"""
