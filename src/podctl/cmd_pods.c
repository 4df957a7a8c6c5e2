/* cmd_pods.c — podctl get pods, get containers, describe pod, history and events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "core/util.h"
#include "podctl/common.h"

int
cmd_get_pods(FILE *f, const struct podctl_opts *o)
{
	struct json_doc   *doc;
	const struct json *data = client_request(f, o, &doc, "get_pods", opts_ns(o), NULL, 0);
	const char *hdr[] = { "NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "STATE",
		"IP", "NODE", "UID", "CRI CALL" };
	struct out_table t;
	size_t           i, off = o->all_ns ? 0 : 1;

	if (out_structured(o, data))
		goto out;
	memset(&t, 0, sizeof(t));
	t.ncols = (o->fmt == FMT_WIDE ? 11 : 8) - off;
	if (json_len(data) == 0) {
		if (o->all_ns)
			fprintf(stderr, "No resources found\n");
		else
			fprintf(stderr, "No resources found in %s namespace.\n", opts_ns(o));
		goto out;
	}
	out_table_row(&t, hdr + off);
	for (i = 0; i < json_len(data); i++) {
		const struct json *p = json_index(data, i);
		char               restarts[32], a[32], call[96], ab[32];
		const char        *row[11];

		snprintf(restarts, sizeof(restarts), "%lld", (long long)jv_int(p, "restarts", 0));
		if (jv_str(p, "criCall") != NULL)
			snprintf(call, sizeof(call), "%s (%s)", jv_str(p, "criCall"),
			    out_dur(jv_int(p, "criCallAgeMs", 0), ab, sizeof(ab)));
		else
			snprintf(call, sizeof(call), "<none>");
		row[0] = jv_str(p, "namespace");
		row[1] = jv_str(p, "name");
		row[2] = jv_str(p, "ready");
		row[3] = jv_str(p, "status");
		row[4] = restarts;
		row[5] = out_age(jv_int(p, "ageSeconds", -1), a, sizeof(a));
		row[6] = jv_str(p, "state");
		row[7] = jv_strd(p, "ip", "<none>");
		row[8] = jv_strd(p, "node", "<none>");
		row[9] = jv_str(p, "uid");
		row[10] = call;
		out_table_row(&t, row + off);
	}
	out_table_print(&t);
out:
	json_free(doc);
	return 0;
}

int
cmd_get_containers(FILE *f, const struct podctl_opts *o)
{
	struct json_doc   *doc;
	const struct json *data = client_request(f, o, &doc, "get_containers", opts_ns(o), NULL, 0);
	const char *hdr[] = { "NAMESPACE", "CONTAINER", "POD", "NAME", "STATE", "ATTEMPT", "EXIT",
		"AGE" };
	struct out_table t;
	size_t           i, off = o->all_ns ? 0 : 1;

	if (out_structured(o, data))
		goto out;
	memset(&t, 0, sizeof(t));
	t.ncols = 8 - off;
	out_table_row(&t, hdr + off);
	for (i = 0; i < json_len(data); i++) {
		const struct json *c = json_index(data, i);
		char               id[16], att[16], ex[16], a[32];
		const char        *row[8];
		int64_t            code;

		snprintf(id, sizeof(id), "%.13s", jv_strd(c, "id", ""));
		snprintf(att, sizeof(att), "%lld", (long long)jv_int(c, "attempt", 0));
		if (json_int(json_get(c, "exitCode"), &code) == 0)
			snprintf(ex, sizeof(ex), "%lld", (long long)code);
		else
			snprintf(ex, sizeof(ex), "-");
		row[0] = jv_str(c, "namespace");
		row[1] = id;
		row[2] = jv_str(c, "pod");
		row[3] = jv_str(c, "name");
		row[4] = jv_str(c, "state");
		row[5] = att;
		row[6] = ex;
		row[7] = out_age(jv_int(c, "ageSeconds", -1), a, sizeof(a));
		out_table_row(&t, row + off);
	}
	out_table_print(&t);
out:
	json_free(doc);
	return 0;
}

static void
cmd_event_cells(const struct json *e, char *seen, size_t seenlen, char *obj, size_t objlen)
{
	char    a[32], b[32];
	int64_t now = time(NULL) * 1000, cnt = jv_int(e, "count", 1);

	out_age((now - jv_int(e, "lastTimestampMs", now)) / 1000, a, sizeof(a));
	if (cnt > 1)
		snprintf(seen, seenlen, "%s (x%lld over %s)", a, (long long)cnt,
		    out_age((now - jv_int(e, "firstTimestampMs", now)) / 1000, b, sizeof(b)));
	else
		snprintf(seen, seenlen, "%s", a);
	snprintf(obj, objlen, "%s/%s",
	    strcmp(jv_strd(e, "kind", "Pod"), "Pod") == 0 ? "pod" : "node",
	    jv_strd(e, "name", "?"));
}

int
cmd_events(FILE *f, const struct podctl_opts *o)
{
	struct json_doc   *doc;
	const struct json *data = client_request(f, o, &doc, "events", opts_ns(o), NULL, o->watch);
	const char        *hdr[] = { "LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE" };
	struct out_table   t;
	size_t             i;

	if (o->fmt == FMT_JSON && o->watch) {
		for (i = 0; i < json_len(data); i++) { /* one compact object per line */
			char *s = json_to_string(json_index(data, i));

			printf("%s\n", s);
			free(s);
		}
	} else if (!out_structured(o, data)) {
		memset(&t, 0, sizeof(t));
		t.ncols = 5;
		out_table_row(&t, hdr);
		for (i = 0; i < json_len(data); i++) {
			const struct json *e = json_index(data, i);
			char               seen[96], obj[300];
			const char        *row[5];

			cmd_event_cells(e, seen, sizeof(seen), obj, sizeof(obj));
			row[0] = seen;
			row[1] = jv_str(e, "type");
			row[2] = jv_str(e, "reason");
			row[3] = obj;
			row[4] = jv_str(e, "message");
			out_table_row(&t, row);
		}
		out_table_print(&t);
	}
	json_free(doc);
	fflush(stdout);
	while (o->watch) {
		const struct json *e;
		const char        *want = opts_ns(o);

		doc = client_read(f, o, 1);
		if (doc == NULL) {
			fprintf(stderr, "podctl: kletd at %s closed the stream\n", o->socket);
			return 1;
		}
		e = json_get(json_root(doc), "event");
		if (e == NULL && !jv_bool(json_root(doc), "ok")) {
			fprintf(stderr, "podctl: error from kletd: %s\n",
			    jv_strd(json_root(doc), "error", "?"));
			json_free(doc);
			return 1;
		}
		if (e != NULL &&
		    (want == NULL || strcmp(jv_strd(e, "namespace", ""), want) == 0 ||
		        strcmp(jv_strd(e, "kind", ""), "Node") == 0)) {
			if (o->fmt == FMT_JSON) {
				char *s = json_to_string(e);

				printf("%s\n", s);
				free(s);
			} else if (o->fmt == FMT_YAML) {
				printf("---\n");
				out_yaml(e);
			} else {
				char seen[96], obj[300];

				cmd_event_cells(e, seen, sizeof(seen), obj, sizeof(obj));
				printf("%-9s   %-7s   %-18s   %-30s   %s\n", seen,
				    jv_strd(e, "type", ""), jv_strd(e, "reason", ""), obj,
				    jv_strd(e, "message", ""));
			}
			fflush(stdout);
		}
		json_free(doc);
	}
	return 0;
}

/* The pod's history as kletd stored it: its worker's state changes and its events, oldest
 * first, with their wall-clock time (they survive kletd's restarts). */
int
cmd_history(FILE *f, const struct podctl_opts *o, const char *what)
{
	struct json_doc   *doc;
	const struct json *d, *h;
	const char        *hdr[] = { "TIME", "AGE", "REASON", "MESSAGE" };
	char               ns[256], name[256];
	struct out_table   t;
	size_t             i;
	int64_t            now = time(NULL) * 1000;

	opts_pod(o, what, ns, sizeof(ns), name, sizeof(name));
	d = client_request(f, o, &doc, "history", ns, name, 0);
	if (!out_structured(o, d)) {
		h = json_get(d, "history");
		memset(&t, 0, sizeof(t));
		t.ncols = 4;
		out_table_row(&t, hdr);
		for (i = 0; i < json_len(h); i++) {
			const struct json *e = json_index(h, i);
			char               a[32], ts[32];
			const char        *row[4];
			time_t             secs = (time_t)(jv_int(e, "timeMs", now) / 1000);
			struct tm          tm;

			out_age((now - jv_int(e, "timeMs", now)) / 1000, a, sizeof(a));
			gmtime_r(&secs, &tm);
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
			row[0] = ts;
			row[1] = a;
			row[2] = jv_str(e, "reason");
			row[3] = jv_str(e, "message");
			out_table_row(&t, row);
		}
		out_table_print(&t);
	}
	json_free(doc);
	return 0;
}

static void
cmd_describe_state(const char *label, const struct json *st, int indent)
{
	const char *kind = jv_strd(st, "state", "none");
	char        wb[40], ab[32];
	int64_t     t;

	if (strcmp(kind, "none") == 0) {
		if (strcmp(label, "Last State") == 0)
			printf("%*s%-16s<none>\n", indent, "", "Last State:");
		else
			printf("%*s%-16sWaiting\n", indent, "", "State:");
		return;
	}
	printf("%*s%-16s%c%s", indent, "",
	    strcmp(label, "State") == 0 ? "State:" : "Last State:", kind[0] - 32, kind + 1);
	if (jv_str(st, "reason") != NULL)
		printf(" (%s)", jv_str(st, "reason"));
	printf("\n");
	if (strcmp(kind, "terminated") == 0)
		printf("%*s  %-14s%lld\n", indent, "",
		    "Exit Code:", (long long)jv_int(st, "exitCode", 0));
	if (jv_str(st, "message") != NULL && *jv_str(st, "message") != '\0')
		printf("%*s  %-14s%s\n", indent, "", "Message:", jv_str(st, "message"));
	if ((t = jv_int(st, "startedAt", 0)) > 0)
		printf("%*s  %-14s%s (%s ago)\n", indent, "",
		    "Started:", out_wall(t, wb, sizeof(wb)),
		    out_age(time(NULL) - t, ab, sizeof(ab)));
	if ((t = jv_int(st, "finishedAt", 0)) > 0)
		printf("%*s  %-14s%s (%s ago)\n", indent, "",
		    "Finished:", out_wall(t, wb, sizeof(wb)),
		    out_age(time(NULL) - t, ab, sizeof(ab)));
}

static void
cmd_describe_strv(const char *label, const struct json *a)
{
	size_t i;

	if (json_len(a) == 0)
		return;
	printf("    %-16s", label);
	for (i = 0; i < json_len(a); i++)
		printf("%s%s", i ? " " : "", json_str(json_index(a, i)));
	printf("\n");
}

int
cmd_describe(FILE *f, const struct podctl_opts *o, const char *what)
{
	struct json_doc   *doc;
	const struct json *d, *w, *r, *a;
	char               ns[256], name[256], wb[40], ab[32], db[32];
	size_t             i, j;
	int64_t            t;

	opts_pod(o, what, ns, sizeof(ns), name, sizeof(name));
	d = client_request(f, o, &doc, "describe_pod", ns, name, 0);
	if (out_structured(o, d))
		goto out;
	printf("%-16s%s\n", "Name:", jv_str(d, "name"));
	printf("%-16s%s\n", "Namespace:", jv_str(d, "namespace"));
	printf("%-16s%s\n", "UID:", jv_str(d, "uid"));
	printf("%-16s%s\n", "Node:", jv_strd(d, "node", "<none>"));
	printf("%-16s%s\n", "Source:", jv_strd(d, "source", "<unknown>"));
	if ((t = jv_int(d, "created", 0)) > 0)
		printf("%-16s%s (%s ago)\n", "Created:", out_wall(t, wb, sizeof(wb)),
		    out_age(time(NULL) - t, ab, sizeof(ab)));
	printf("%-16s%s\n", "Status:", jv_str(d, "status"));
	printf("%-16s%s\n", "Phase:", jv_str(d, "phase"));
	if (jv_str(d, "reason") != NULL)
		printf("%-16s%s\n", "Reason:", jv_str(d, "reason"));
	if (jv_str(d, "message") != NULL)
		printf("%-16s%s\n", "Message:", jv_str(d, "message"));
	printf("%-16s%s\n", "IP:", jv_strd(d, "ip", "<none>"));
	printf("%-16s%s\n", "QoS Class:", jv_str(d, "qosClass"));
	printf("%-16s%s\n", "Restart Policy:", jv_str(d, "restartPolicy"));
	printf("%-16s%llds\n",
	    "Grace Period:", (long long)jv_int(d, "terminationGracePeriodSeconds", 30));

	w = json_get(d, "worker");
	printf("Pod Worker:\n");
	printf("  %-18s%s\n", "State:", jv_str(w, "state"));
	if (jv_bool(w, "working"))
		printf("  %-18s%s (for %s)\n", "Transaction:", jv_strd(w, "transaction", "?"),
		    out_dur(jv_int(w, "transactionAgeMs", 0), db, sizeof(db)));
	else
		printf("  %-18s<idle>\n", "Transaction:");
	printf("  %-18s%s\n", "Pending Update:", jv_strd(w, "pendingUpdate", "<none>"));
	if (json_get(w, "nextSyncInMs") != NULL)
		printf("  %-18sin %s%s\n",
		    "Next Sync:", out_dur(jv_int(w, "nextSyncInMs", 0), db, sizeof(db)),
		    jv_int(w, "failures", 0) > 0 ? " (backoff after failure)" : "");
	else
		printf("  %-18s<not queued>\n", "Next Sync:");
	if (json_get(w, "graceSeconds") != NULL)
		printf("  %-18s%llds, deadline in %s\n",
		    "Grace:", (long long)jv_int(w, "graceSeconds", 0),
		    out_dur(jv_int(w, "graceDeadlineInMs", 0), db, sizeof(db)));
	printf("  %-18s%s\n", "Last Error:", jv_strd(w, "lastError", "<none>"));
	printf("  %-18s%lld\n", "Failures:", (long long)jv_int(w, "failures", 0));

	r = json_get(d, "runtime");
	printf("Runtime Machine:\n");
	printf("  %-18s%s\n", "Machine:", jv_strd(r, "machine", "<idle>"));
	printf("  %-18s%s\n", "Step:", jv_strd(r, "step", "<none>"));
	if (jv_str(r, "call") != NULL)
		printf("  %-18s%s%s%s (in flight for %s)\n", "CRI Call:", jv_str(r, "call"),
		    jv_str(r, "callTarget") ? " " : "", jv_strd(r, "callTarget", ""),
		    out_dur(jv_int(r, "callAgeMs", 0), db, sizeof(db)));
	else
		printf("  %-18s<none>\n", "CRI Call:");
	printf("  %-18s%s\n", "Sandbox:", jv_strd(r, "sandboxID", "<none>"));
	if (jv_str(r, "sandboxError") != NULL)
		printf("  %-18s%s\n", "Sandbox Error:", jv_str(r, "sandboxError"));
	printf("  %-18s%s\n", "Last Error:", jv_strd(r, "lastError", "<none>"));
	if (json_get(r, "lastSyncAgoMs") != NULL)
		printf("  %-18s%s ago\n",
		    "Last Sync:", out_dur(jv_int(r, "lastSyncAgoMs", 0), db, sizeof(db)));
	a = json_get(r, "startErrors");
	for (i = 0; i < json_len(a); i++) {
		const struct json *e = json_index(a, i);

		printf("  %-18s%s: %s: %s\n", i == 0 ? "Start Errors:" : "", jv_str(e, "container"),
		    jv_str(e, "reason"), jv_strd(e, "message", ""));
	}

	a = json_get(d, "conditions");
	printf("Conditions:\n  %-28sStatus\n", "Type");
	for (i = 0; i < json_len(a); i++)
		printf("  %-28s%s\n", jv_str(json_index(a, i), "type"),
		    jv_str(json_index(a, i), "status"));

	a = json_get(d, "containers");
	printf("Containers:\n");
	for (i = 0; i < json_len(a); i++) {
		const struct json *c = json_index(a, i), *env, *pr;

		printf("  %s%s:\n", json_key(a, i),
		    strcmp(jv_strd(c, "kind", ""), "init") == 0 ? " (init)" : "");
		printf("    %-16s%s\n", "Container ID:", jv_strd(c, "containerID", "<none>"));
		printf("    %-16s%s\n", "Image:", jv_str(c, "image"));
		printf("    %-16s%s\n", "Pull Policy:", jv_str(c, "imagePullPolicy"));
		cmd_describe_strv("Command:", json_get(c, "command"));
		cmd_describe_strv("Args:", json_get(c, "args"));
		if (json_get(c, "current") != NULL) {
			cmd_describe_state("State", json_get(c, "current"), 4);
			cmd_describe_state("Last State", json_get(c, "lastState"), 4);
			printf("    %-16s%s\n", "Ready:", jv_bool(c, "ready") ? "True" : "False");
			printf("    %-16s%lld\n",
			    "Restart Count:", (long long)jv_int(c, "restartCount", 0));
		} else {
			printf("    %-16s<no status>\n", "State:");
		}
		pr = json_get(c, "probes");
		for (j = 0; j < json_len(pr); j++)
			printf("    %-16s%s\n", j == 0 ? "Probes:" : "", json_key(pr, j));
		for (j = 0; j < json_len(pr); j++)
			printf("      %s: %s\n", json_key(pr, j), json_str(json_index(pr, j)));
		env = json_get(c, "env");
		printf("    %-16s%s\n", "Environment:", json_len(env) == 0 ? "<none>" : "");
		for (j = 0; j < json_len(env); j++) {
			const struct json *e = json_index(env, j);

			/* Secret references show as <secret NAME/KEY>: the server never has
			 * their values to send. */
			printf("      %s: %s\n", jv_strd(e, "name", "(prefix)"),
			    jv_str(e, "ref") != NULL ? jv_str(e, "ref") : jv_strd(e, "value", ""));
		}
	}

	a = json_get(d, "events");
	printf("Events:");
	if (json_len(a) == 0) {
		printf("          <none>\n");
	} else {
		struct out_table et;
		const char      *hdr[] = { "  Type", "Reason", "Age", "Message" };

		printf("\n");
		memset(&et, 0, sizeof(et));
		et.ncols = 4;
		out_table_row(&et, hdr);
		for (i = 0; i < json_len(a); i++) {
			const struct json *e = json_index(a, i);
			char               seen[96], obj[300], type[32];
			const char        *row[4];

			cmd_event_cells(e, seen, sizeof(seen), obj, sizeof(obj));
			snprintf(type, sizeof(type), "  %s", jv_strd(e, "type", ""));
			row[0] = type;
			row[1] = jv_str(e, "reason");
			row[2] = seen;
			row[3] = jv_str(e, "message");
			out_table_row(&et, row);
		}
		out_table_print(&et);
	}
out:
	json_free(doc);
	return 0;
}
