-- 001-init: everything klet keeps across restarts (see include/store.h).

-- Desired pods, as their source last gave them.
CREATE TABLE pods (
	uid        TEXT PRIMARY KEY NOT NULL,
	source     TEXT NOT NULL CHECK (source IN ('file', 'api')),
	ns         TEXT NOT NULL,
	name       TEXT NOT NULL,
	doc        BLOB NOT NULL,
	format     TEXT NOT NULL CHECK (format IN ('json', 'yaml')),
	updated_wall_ms INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- One row per pod worker: its state machine's durable part.
CREATE TABLE workers (
	uid        TEXT PRIMARY KEY NOT NULL,
	state      TEXT NOT NULL
	           CHECK (state IN ('sync', 'terminating', 'terminated', 'finished')),
	grace_seconds          INTEGER NOT NULL DEFAULT 0,
	grace_deadline_wall_ms INTEGER NOT NULL DEFAULT 0,
	step       TEXT,
	last_error TEXT,
	failures   INTEGER NOT NULL DEFAULT 0,
	next_retry_wall_ms     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- The latest generated status of each pod and the version the API server acknowledged.
CREATE TABLE statuses (
	uid           TEXT PRIMARY KEY NOT NULL,
	version       INTEGER NOT NULL DEFAULT 0,
	json          TEXT,
	acked_version INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- Every container exit seen, until its pod is gone.
CREATE TABLE container_exits (
	container_id  TEXT PRIMARY KEY NOT NULL,
	uid           TEXT NOT NULL,
	name          TEXT NOT NULL,
	restart_count INTEGER NOT NULL DEFAULT 0,
	exit_code     INTEGER NOT NULL DEFAULT 0,
	reason        TEXT,
	message       TEXT,
	started_ns    INTEGER NOT NULL DEFAULT 0,
	finished_ns   INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX container_exits_uid ON container_exits (uid, name, restart_count);

-- Written before every CRI call that creates something (sandbox attempt, container for a
-- restart count), deleted once the object is known to the runtime.
CREATE TABLE intents (
	uid     TEXT NOT NULL,
	kind    TEXT NOT NULL CHECK (kind IN ('sandbox', 'container')),
	name    TEXT NOT NULL DEFAULT '',
	attempt INTEGER NOT NULL,
	created_wall_ms INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (uid, kind, name, attempt)
) WITHOUT ROWID;

-- Recent events (bounded by the store to the newest rows).
CREATE TABLE events (
	id      INTEGER PRIMARY KEY,
	uid     TEXT NOT NULL,
	reason  TEXT NOT NULL,
	message TEXT,
	wall_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX events_uid ON events (uid);

-- Small named values, e.g. the pods watch resourceVersion.
CREATE TABLE meta (
	key   TEXT PRIMARY KEY NOT NULL,
	value TEXT NOT NULL
) WITHOUT ROWID;
