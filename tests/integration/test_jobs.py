"""The pipeline's jobs as `assocmem jobs` shows them: queued, failed with the error, and a
failed one queued again."""

from __future__ import annotations

from rq import SimpleWorker
from rq.serializers import JSONSerializer

from assocmem.workers.jobs import list_jobs, requeue
from assocmem.workers.keys import QUEUES
from assocmem.workers.runtime import Runtime, use_runtime
from assocmem.workers.scheduler import FOLD_RETRIES, enqueue_fold

from ..stores import write


def work(runtime: Runtime) -> None:
    use_runtime(runtime)
    worker = SimpleWorker(
        runtime.queues(), connection=runtime.queue_connection, serializer=JSONSerializer
    )
    worker.work(burst=True)


def test_a_queued_fold_job_is_listed_and_a_failed_job_shows_its_error_and_can_be_requeued(
    runtime: Runtime,
) -> None:
    write(runtime, ["a", "b"])
    assert enqueue_fold(runtime, "default")
    queued = list_jobs(runtime)
    assert [(j.id, j.state, j.queue, j.args) for j in queued] == [
        ("fold-default", "queued", QUEUES[0], ["default"])
    ]
    assert queued[0].retries_left == FOLD_RETRIES.max
    runtime.queue().enqueue_call(
        "assocmem.workers.fold_job.no_such_job", args=("default",), job_id="broken"
    )
    work(runtime)
    failed = [j for j in list_jobs(runtime) if j.state == "failed"]
    assert [j.id for j in failed] == ["broken"]
    assert "no_such_job" in (failed[0].error or "")
    assert requeue(runtime, "broken").state == "queued"
    assert [j.state for j in list_jobs(runtime)] == ["queued"]
