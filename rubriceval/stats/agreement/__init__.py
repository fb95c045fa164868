"""How far an LLM judge agrees with people, and how far people agree with each other.

ordinal.py      judge vs human on a 1..K scale (exact, ±1, Cohen's kappa, Spearman, Kendall, confusion, worst items)
binary.py       judge vs human on yes/no labels (accuracy, precision, recall, F1, kappa)
inter_rater.py  between experts: Krippendorff's alpha and Fleiss' kappa
paired.py       score pairs → contingency table; tables.py statistics on tables; estimate.py bootstrap CIs

Every statistic comes with a seeded percentile-bootstrap CI; undefined ones are `None` with a note, never NaN.
"""
from rubriceval.stats.agreement.binary import (
                                               BinaryAgreementReport,
                                               BinaryDisagreement,
                                               as_binary_label,
                                               binary_agreement_report,
)
from rubriceval.stats.agreement.estimate import MIN_DEFINED_REPLICATE_SHARE, AgreementInputError, Estimate
from rubriceval.stats.agreement.inter_rater import (
                                               AlphaLevel,
                                               fleiss_kappa,
                                               fleiss_kappa_from_counts,
                                               krippendorff_alpha,
)
from rubriceval.stats.agreement.ordinal import (
                                               AgreementReport,
                                               PairedVerdicts,
                                               agreement_from_verdicts,
                                               agreement_report,
                                               cohen_kappa,
                                               kendall,
                                               pair_verdicts,
                                               spearman,
)
from rubriceval.stats.agreement.paired import WorstItem, confusion_matrix
from rubriceval.stats.agreement.tables import KappaWeights

__all__ = ["MIN_DEFINED_REPLICATE_SHARE", "AgreementInputError", "AgreementReport", "AlphaLevel",
           "BinaryAgreementReport", "BinaryDisagreement", "Estimate", "KappaWeights", "PairedVerdicts", "WorstItem",
           "agreement_from_verdicts", "agreement_report", "as_binary_label", "binary_agreement_report", "cohen_kappa",
           "confusion_matrix", "fleiss_kappa", "fleiss_kappa_from_counts", "kendall", "krippendorff_alpha",
           "pair_verdicts", "spearman"]
