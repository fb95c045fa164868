from rubriceval.data.sample import Sample
from rubriceval.data.io import read_dataset, write_dataset

__all__ = ["Sample", "read_dataset", "write_dataset"]
