"""The scale-out mode on one machine, for trying it out: `fuseforks cluster` starts PostgreSQL and
NATS from the wheels of the `cluster` extra, workers, the provider simulator and the demo camera
(see `local.py`)."""
