from rubriceval.store.runs import RunStore, RunConfig, RunInfo

__all__ = ['RunStore', 'RunConfig', 'RunInfo']
