"""NATS JetStream as the bus between processes: the record's events on a stream (relayed from the
store, never lost between a commit and a publish), turn requests on a work queue, and followers
in any process."""
