"""Workers: processes on any machine that run turns from the work queue, record them in a shared
PostgreSQL store, relay the record to the message bus, and take over the turns of a worker that
died."""

from fuseforks.workers.settings import WorkerSettings
from fuseforks.workers.worker import Worker

__all__ = ["Worker", "WorkerSettings"]
