-- 002-recovery: what a restarted daemon needs to resume without asking the runtime about
-- every object, and the part of a worker's state 001 did not keep.

-- The worker was told to terminate because its source no longer has the pod (a static
-- manifest deleted, an API pod gone): the same UID added again must start over.
ALTER TABLE workers ADD COLUMN removed INTEGER NOT NULL DEFAULT 0;

-- The details of each sandbox and container the PLEG last read with a status call, with the
-- state it had then. After a restart, an object the runtime lists in the same state takes
-- these details instead of a PodSandboxStatus / ContainerStatus call. A row goes when its
-- object leaves the runtime (or its pod is forgotten).
CREATE TABLE runtime_objects (
	id           TEXT PRIMARY KEY NOT NULL,
	uid          TEXT NOT NULL,
	sandbox      INTEGER NOT NULL DEFAULT 0,
	state        INTEGER NOT NULL,
	started_ns   INTEGER NOT NULL DEFAULT 0,
	finished_ns  INTEGER NOT NULL DEFAULT 0,
	exit_code    INTEGER NOT NULL DEFAULT 0,
	reason       TEXT,
	message      TEXT,
	image_ref    TEXT,
	ip           TEXT,
	extra_ips    TEXT,
	network_mode INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX runtime_objects_uid ON runtime_objects (uid);
