"""SQL shared by the report sources (report/source.py, report/source_diagnosis.py)."""

# Verdicts of a run joined to their samples, as RunStore.verdicts orders them.
FROM_RUN = ("FROM verdicts v JOIN runs r ON r.run_id = v.run_id "
            "JOIN dataset_samples d ON d.dataset_id = r.dataset_id AND d.sample_id = v.sample_id WHERE v.run_id = ?")
