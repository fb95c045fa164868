from rubriceval.data.io import read_dataset, write_dataset
from rubriceval.data.sample import Sample

__all__ = ["Sample", "read_dataset", "write_dataset"]
