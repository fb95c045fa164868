"""A run killed with kill -9 never updates its row; `rubriceval runs` shows it as interrupted, with the hint to
resume it, once its process is gone."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from rubriceval import RunConfig, RunStore, Sample
from rubriceval.store.liveness import ProcessStamp, current_process, is_gone

HOLD_A_RUN = textwrap.dedent("""
    import sys, time
    from rubriceval import Sample
    from rubriceval import RunConfig, RunStore
    store = RunStore(sys.argv[1])
    run_id = store.create_run(RunConfig(), [Sample(id="a", question="订单到哪了？")], [], name="held")
    store.set_status(run_id, "running")
    print("ready", flush=True)
    time.sleep(120)
""")


def test_a_run_whose_process_was_killed_shows_interrupted_with_the_resume_hint(store_target):
    db = store_target
    proc = subprocess.Popen([sys.executable, "-c", HOLD_A_RUN, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        alive = RunStore(db).run_info("held")
        assert alive.status == "running" and alive.hint is None          # its process is still there
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        proc.kill()
    info = RunStore(db).run_info("held")
    assert info.status == "interrupted"
    assert "--resume held" in info.hint
    listing = subprocess.run([sys.executable, "-m", "rubriceval.cli", "runs", "--store", str(db)],
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    assert "interrupted" in listing.stdout and "--resume held" in listing.stdout


def test_a_running_run_records_this_process(store_target):
    store = RunStore(store_target)
    run_id = store.create_run(RunConfig(), [Sample(id="a", question="q")], [], name="mine")
    store.set_status(run_id, "running")
    row = store.conn.execute("SELECT pid, host, process_started FROM runs WHERE run_id=?", (run_id,)).fetchone()
    me = current_process()
    assert (row["pid"], row["host"]) == (os.getpid(), me.host)
    assert store.run_info("mine").status == "running"


def test_gone_means_certainly_gone():
    me = current_process()
    assert not is_gone(me)
    if me.started is not None:                      # the pid is alive but now belongs to another process
        assert is_gone(me.model_copy(update={"started": me.started - 3600}))
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert is_gone(ProcessStamp(pid=int(done.stdout), host=me.host))
    assert not is_gone(ProcessStamp(pid=int(done.stdout), host=me.host + "-elsewhere"))   # cannot tell: not gone
