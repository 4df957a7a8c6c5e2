/* test_pod_validate.c — a table of invalid pods, each with the exact error (path: reason),
 * and a table of valid edge cases that must pass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/util.h"
#include "pod/pod.h"

struct vcase {
	const char *name;
	const char *yaml;
	const char *want; /* NULL: valid */
};

#define META "metadata: {name: p, namespace: ns}\n"
#define SPEC META "spec:\n"
#define C0   SPEC "  containers:\n  - name: c\n    image: busybox\n"

static const struct vcase vcases[] = {
	/* metadata */
	{ "name required", "spec:\n  containers: [{name: c, image: i}]\n",
	    "metadata.name: required" },
	{ "name not a subdomain",
	    "metadata: {name: Web_1}\nspec:\n  containers: [{name: c, image: i}]\n",
	    "metadata.name: \"Web_1\" is not a DNS-1123 subdomain" },
	{ "name with empty label",
	    "metadata: {name: a..b}\nspec:\n  containers: [{name: c, image: i}]\n",
	    "metadata.name: \"a..b\" is not a DNS-1123 subdomain" },
	{ "namespace not a label",
	    "metadata: {name: p, namespace: a.b}\n"
	    "spec:\n  containers: [{name: c, image: i}]\n",
	    "metadata.namespace: \"a.b\" is not a DNS-1123 label" },
	{ "label key",
	    "metadata: {name: p, labels: {\"-x\": y}}\n"
	    "spec:\n  containers: [{name: c, image: i}]\n",
	    "metadata.labels: \"-x\" is not a valid label key" },
	{ "label value",
	    "metadata: {name: p, labels: {x: \"a b\"}}\n"
	    "spec:\n  containers: [{name: c, image: i}]\n",
	    "metadata.labels[x]: \"a b\" is not a valid label value" },
	{ "annotation key",
	    "metadata: {name: p, annotations: {\"a/b/c\": y}}\n"
	    "spec:\n  containers: [{name: c, image: i}]\n",
	    "metadata.annotations: \"a/b/c\" is not a valid annotation key" },
	{ "negative deletion grace",
	    "metadata: {name: p, deletionGracePeriodSeconds: -1}\n"
	    "spec:\n  containers: [{name: c, image: i}]\n",
	    "metadata.deletionGracePeriodSeconds: must be greater than or equal to 0" },
	/* spec */
	{ "no containers", SPEC "  containers: []\n", "spec.containers: required" },
	{ "negative grace", C0 "  terminationGracePeriodSeconds: -5\n",
	    "spec.terminationGracePeriodSeconds: must be greater than or equal to 0" },
	{ "zero deadline", C0 "  activeDeadlineSeconds: 0\n",
	    "spec.activeDeadlineSeconds: must be greater than 0" },
	{ "negative deadline", C0 "  activeDeadlineSeconds: -1\n",
	    "spec.activeDeadlineSeconds: must be greater than 0" },
	{ "hostname", C0 "  hostname: My_Host\n",
	    "spec.hostname: \"My_Host\" is not a DNS-1123 label" },
	{ "subdomain", C0 "  subdomain: a.b\n", "spec.subdomain: \"a.b\" is not a DNS-1123 label" },
	{ "dnsPolicy None without config", C0 "  dnsPolicy: None\n",
	    "spec.dnsConfig: required when dnsPolicy is None" },
	{ "dnsPolicy None without nameservers",
	    C0 "  dnsPolicy: None\n  dnsConfig: {searches: [a]}\n",
	    "spec.dnsConfig.nameservers: at least one required when dnsPolicy is None" },
	{ "too many nameservers", C0 "  dnsConfig: {nameservers: [a, b, c, d]}\n",
	    "spec.dnsConfig.nameservers: at most 3 allowed" },
	{ "dns option name", C0 "  dnsConfig: {options: [{value: \"1\"}]}\n",
	    "spec.dnsConfig.options[0].name: required" },
	{ "toleration operator", C0 "  tolerations: [{key: k, operator: In}]\n",
	    "spec.tolerations[0].operator: unsupported value \"In\"" },
	{ "toleration Exists with value",
	    C0 "  tolerations: [{key: k, operator: Exists, value: v}]\n",
	    "spec.tolerations[0].value: must be empty when operator is Exists" },
	{ "toleration empty key", C0 "  tolerations: [{operator: Equal, value: v}]\n",
	    "spec.tolerations[0].operator: must be Exists when key is empty" },
	{ "toleration effect", C0 "  tolerations: [{key: k, effect: Never}]\n",
	    "spec.tolerations[0].effect: unsupported value \"Never\"" },
	{ "pull secret name", C0 "  imagePullSecrets: [{}]\n",
	    "spec.imagePullSecrets[0].name: required" },
	{ "pod runAsUser", C0 "  securityContext: {runAsUser: -1}\n",
	    "spec.securityContext.runAsUser: must be between 0 and 2147483647" },
	{ "pod fsGroup", C0 "  securityContext: {fsGroup: 4294967296}\n",
	    "spec.securityContext.fsGroup: must be between 0 and 2147483647" },
	{ "supplemental group", C0 "  securityContext: {supplementalGroups: [1, -2]}\n",
	    "spec.securityContext.supplementalGroups[1]: must be between 0 and 2147483647" },
	{ "sysctl name", C0 "  securityContext: {sysctls: [{value: \"1\"}]}\n",
	    "spec.securityContext.sysctls[0].name: required" },
	{ "pod seccomp type", C0 "  securityContext: {seccompProfile: {type: Strict}}\n",
	    "spec.securityContext.seccompProfile.type: unsupported value \"Strict\"" },
	{ "host alias ip", C0 "  hostAliases: [{hostnames: [a]}]\n",
	    "spec.hostAliases[0].ip: required" },
	/* containers */
	{ "container name required", SPEC "  containers: [{image: i}]\n",
	    "spec.containers[0].name: required" },
	{ "container name not a label", SPEC "  containers: [{name: Web, image: i}]\n",
	    "spec.containers[0].name: \"Web\" is not a DNS-1123 label" },
	{ "container name too long",
	    SPEC "  containers: [{name: "
	         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, image: i}]\n",
	    "spec.containers[0].name: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""
	    " is not a DNS-1123 label" },
	{ "image required", SPEC "  containers:\n  - {name: a, image: i}\n  - {name: b}\n",
	    "spec.containers[1].image: required" },
	{ "empty image", SPEC "  containers:\n  - {name: a, image: \"\"}\n",
	    "spec.containers[0].image: required" },
	{ "duplicate app names",
	    SPEC "  containers:\n  - {name: a, image: i}\n  - {name: a, image: i}\n",
	    "spec.containers[1].name: duplicate name \"a\"" },
	{ "duplicate init and app",
	    SPEC "  initContainers: [{name: a, image: i}]\n"
	         "  containers: [{name: a, image: i}]\n",
	    "spec.containers[0].name: duplicate name \"a\"" },
	{ "duplicate ephemeral", C0 "  ephemeralContainers: [{name: c, image: i}]\n",
	    "spec.ephemeralContainers[0].name: duplicate name \"c\"" },
	{ "init image required",
	    SPEC "  initContainers: [{name: a}]\n  containers: [{name: c, image: i}]\n",
	    "spec.initContainers[0].image: required" },
	{ "containerPort zero", C0 "    ports: [{containerPort: 0}]\n",
	    "spec.containers[0].ports[0].containerPort: must be between 1 and 65535" },
	{ "containerPort too big", C0 "    ports: [{containerPort: 80}, {containerPort: 65536}]\n",
	    "spec.containers[0].ports[1].containerPort: must be between 1 and 65535" },
	{ "hostPort too big", C0 "    ports: [{containerPort: 80, hostPort: 70000}]\n",
	    "spec.containers[0].ports[0].hostPort: must be between 0 and 65535" },
	{ "hostPort negative", C0 "    ports: [{containerPort: 80, hostPort: -1}]\n",
	    "spec.containers[0].ports[0].hostPort: must be between 0 and 65535" },
	{ "hostNetwork port mismatch",
	    C0 "    ports: [{containerPort: 80, hostPort: 8080}]\n"
	       "  hostNetwork: true\n",
	    "spec.containers[0].ports[0].hostPort: must match containerPort when hostNetwork is true" },
	{ "port name", C0 "    ports: [{containerPort: 80, name: HTTP}]\n",
	    "spec.containers[0].ports[0].name: \"HTTP\" is not an IANA service name" },
	{ "port name digits only", C0 "    ports: [{containerPort: 80, name: \"8080\"}]\n",
	    "spec.containers[0].ports[0].name: \"8080\" is not an IANA service name" },
	{ "duplicate port name",
	    C0 "    ports: [{containerPort: 80, name: web}, "
	       "{containerPort: 81, name: web}]\n",
	    "spec.containers[0].ports[1].name: duplicate name \"web\"" },
	{ "env name required", C0 "    env: [{value: x}]\n",
	    "spec.containers[0].env[0].name: required" },
	{ "env name with =", C0 "    env: [{name: \"A=B\"}]\n",
	    "spec.containers[0].env[0].name: may not contain '='" },
	{ "env secret key",
	    C0 "    env:\n    - name: A\n      valueFrom: {secretKeyRef: {name: s}}\n",
	    "spec.containers[0].env[0].valueFrom: name and key are required" },
	{ "env fieldPath", C0 "    env:\n    - name: A\n      valueFrom: {fieldRef: {}}\n",
	    "spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: required" },
	{ "env resource", C0 "    env:\n    - name: A\n      valueFrom: {resourceFieldRef: {}}\n",
	    "spec.containers[0].env[0].valueFrom.resourceFieldRef.resource: required" },
	{ "envFrom name", C0 "    envFrom: [{secretRef: {}}]\n",
	    "spec.containers[0].envFrom[0].secretRef.name: required" },
	{ "negative request", C0 "    resources: {requests: {cpu: -1}}\n",
	    "spec.containers[0].resources.requests.cpu: must be greater than or equal to 0" },
	{ "negative limit", C0 "    resources: {limits: {memory: -1Mi}}\n",
	    "spec.containers[0].resources.limits.memory: must be greater than or equal to 0" },
	{ "request over limit", C0 "    resources: {requests: {cpu: 2}, limits: {cpu: 1500m}}\n",
	    "spec.containers[0].resources.requests.cpu: must be less than or equal to the cpu limit" },
	{ "mount name required", C0 "    volumeMounts: [{mountPath: /x}]\n",
	    "spec.containers[0].volumeMounts[0].name: required" },
	{ "mount of unknown volume", C0 "    volumeMounts: [{name: data, mountPath: /x}]\n",
	    "spec.containers[0].volumeMounts[0].name: volume \"data\" not found" },
	{ "mount path required", C0 "    volumeMounts: [{name: v}]\n  volumes: [{name: v}]\n",
	    "spec.containers[0].volumeMounts[0].mountPath: required" },
	{ "mount path twice",
	    C0 "    volumeMounts: [{name: v, mountPath: /x}, {name: v, mountPath: /x}]\n"
	       "  volumes: [{name: v}]\n",
	    "spec.containers[0].volumeMounts[1].mountPath: must be unique" },
	{ "subPath escapes",
	    C0 "    volumeMounts: [{name: v, mountPath: /x, subPath: ../etc}]\n"
	       "  volumes: [{name: v}]\n",
	    "spec.containers[0].volumeMounts[0].subPath: must be a relative path without '..'" },
	{ "probe without handler", C0 "    livenessProbe: {periodSeconds: 5}\n",
	    "spec.containers[0].livenessProbe: must specify a handler type" },
	{ "probe with two handlers",
	    C0 "    readinessProbe:\n      exec: {command: [x]}\n"
	       "      httpGet: {port: 80}\n",
	    "spec.containers[0].readinessProbe: may not specify more than 1 handler type" },
	{ "probe with sleep", C0 "    startupProbe: {sleep: {seconds: 1}}\n",
	    "spec.containers[0].startupProbe.sleep: not supported in probes" },
	{ "probe exec empty", C0 "    livenessProbe: {exec: {}}\n",
	    "spec.containers[0].livenessProbe.exec.command: required" },
	{ "probe port zero", C0 "    livenessProbe: {httpGet: {port: 0}}\n",
	    "spec.containers[0].livenessProbe.httpGet.port: must be between 1 and 65535" },
	{ "probe port name", C0 "    livenessProbe: {tcpSocket: {port: No_Such}}\n",
	    "spec.containers[0].livenessProbe.tcpSocket.port: must be a port number or an IANA "
	    "service name" },
	{ "probe scheme", C0 "    livenessProbe: {httpGet: {port: 80, scheme: FTP}}\n",
	    "spec.containers[0].livenessProbe.httpGet.scheme: unsupported value \"FTP\"" },
	{ "probe header name",
	    C0 "    livenessProbe: {httpGet: {port: 80, httpHeaders: [{value: v}]}}\n",
	    "spec.containers[0].livenessProbe.httpGet.httpHeaders[0].name: required" },
	{ "probe grpc port", C0 "    livenessProbe: {grpc: {port: 0}}\n",
	    "spec.containers[0].livenessProbe.grpc.port: must be between 1 and 65535" },
	{ "negative initial delay",
	    C0 "    livenessProbe: {exec: {command: [x]}, initialDelaySeconds: -1}\n",
	    "spec.containers[0].livenessProbe.initialDelaySeconds: must be greater than or equal to 0" },
	{ "negative period", C0 "    readinessProbe: {exec: {command: [x]}, periodSeconds: -10}\n",
	    "spec.containers[0].readinessProbe.periodSeconds: must be greater than or equal to 1" },
	{ "negative timeout", C0 "    readinessProbe: {exec: {command: [x]}, timeoutSeconds: -1}\n",
	    "spec.containers[0].readinessProbe.timeoutSeconds: must be greater than or equal to 1" },
	{ "negative failure threshold",
	    C0 "    readinessProbe: {exec: {command: [x]}, failureThreshold: -1}\n",
	    "spec.containers[0].readinessProbe.failureThreshold: must be greater than or equal to 1" },
	{ "liveness success threshold",
	    C0 "    livenessProbe: {exec: {command: [x]}, successThreshold: 2}\n",
	    "spec.containers[0].livenessProbe.successThreshold: must be 1" },
	{ "startup success threshold",
	    C0 "    startupProbe: {exec: {command: [x]}, successThreshold: 3}\n",
	    "spec.containers[0].startupProbe.successThreshold: must be 1" },
	{ "probe grace zero",
	    C0 "    livenessProbe: {exec: {command: [x]}, terminationGracePeriodSeconds: 0}\n",
	    "spec.containers[0].livenessProbe.terminationGracePeriodSeconds: must be greater than 0" },
	{ "hook without handler", C0 "    lifecycle: {preStop: {}}\n",
	    "spec.containers[0].lifecycle.preStop: must specify a handler type" },
	{ "hook with two handlers",
	    C0 "    lifecycle:\n      postStart:\n        exec: {command: [x]}\n"
	       "        sleep: {seconds: 1}\n",
	    "spec.containers[0].lifecycle.postStart: may not specify more than 1 handler type" },
	{ "hook with grpc", C0 "    lifecycle: {preStop: {grpc: {port: 1}}}\n",
	    "spec.containers[0].lifecycle.preStop.grpc: not supported in lifecycle hooks" },
	{ "hook negative sleep", C0 "    lifecycle: {preStop: {sleep: {seconds: -1}}}\n",
	    "spec.containers[0].lifecycle.preStop.sleep.seconds: must be greater than or equal to 0" },
	{ "stdinOnce without stdin", C0 "    stdinOnce: true\n",
	    "spec.containers[0].stdinOnce: requires stdin" },
	{ "container runAsUser", C0 "    securityContext: {runAsUser: -1}\n",
	    "spec.containers[0].securityContext.runAsUser: must be between 0 and 2147483647" },
	{ "privileged without escalation",
	    C0 "    securityContext: {privileged: true, "
	       "allowPrivilegeEscalation: false}\n",
	    "spec.containers[0].securityContext: cannot set allowPrivilegeEscalation to false and "
	    "privileged to true" },
	{ "seccomp localhost without profile",
	    C0 "    securityContext: {seccompProfile: {type: Localhost}}\n",
	    "spec.containers[0].securityContext.seccompProfile.localhostProfile: required when type "
	    "is Localhost" },
	/* init containers and sidecars */
	{ "restartPolicy on an app container", C0 "    restartPolicy: Always\n",
	    "spec.containers[0].restartPolicy: may only be set on init containers" },
	{ "sidecar restartPolicy Never",
	    C0 "  initContainers: [{name: s, image: i, restartPolicy: Never}]\n",
	    "spec.initContainers[0].restartPolicy: must be Always (got Never)" },
	{ "sidecar restartPolicy OnFailure",
	    C0 "  initContainers: [{name: s, image: i, "
	       "restartPolicy: OnFailure}]\n",
	    "spec.initContainers[0].restartPolicy: must be Always (got OnFailure)" },
	{ "probe on a plain init container",
	    C0 "  initContainers:\n  - name: s\n    image: i\n"
	       "    readinessProbe: {exec: {command: [x]}}\n",
	    "spec.initContainers[0].readinessProbe: may not be set for init containers without "
	    "restartPolicy=Always" },
	{ "restartPolicy on ephemeral",
	    C0 "  ephemeralContainers: [{name: e, image: i, "
	       "restartPolicy: Always}]\n",
	    "spec.ephemeralContainers[0].restartPolicy: may only be set on init containers" },
	/* ephemeral containers */
	{ "ephemeral ports",
	    C0 "  ephemeralContainers: [{name: e, image: i, ports: [{containerPort: 1}]}]\n",
	    "spec.ephemeralContainers[0].ports: may not be set for ephemeral containers" },
	{ "ephemeral resources",
	    C0 "  ephemeralContainers: [{name: e, image: i, "
	       "resources: {limits: {cpu: 1}}}]\n",
	    "spec.ephemeralContainers[0].resources: may not be set for ephemeral containers" },
	{ "ephemeral probe",
	    C0 "  ephemeralContainers: [{name: e, image: i, "
	       "livenessProbe: {exec: {command: [x]}}}]\n",
	    "spec.ephemeralContainers[0].livenessProbe: may not be set for ephemeral containers" },
	{ "ephemeral lifecycle",
	    C0 "  ephemeralContainers: [{name: e, image: i, "
	       "lifecycle: {preStop: {exec: {command: [x]}}}}]\n",
	    "spec.ephemeralContainers[0].lifecycle: may not be set for ephemeral containers" },
	{ "ephemeral target",
	    C0 "  ephemeralContainers: [{name: e, image: i, targetContainerName: x}]\n",
	    "spec.ephemeralContainers[0].targetContainerName: container \"x\" not found" },
	{ "ephemeral image", C0 "  ephemeralContainers: [{name: e}]\n",
	    "spec.ephemeralContainers[0].image: required" },
	/* volumes */
	{ "volume name required", C0 "  volumes: [{emptyDir: {}}]\n",
	    "spec.volumes[0].name: required" },
	{ "volume name not a label", C0 "  volumes: [{name: My.Vol}]\n",
	    "spec.volumes[0].name: \"My.Vol\" is not a DNS-1123 label" },
	{ "duplicate volume", C0 "  volumes: [{name: v}, {name: w}, {name: v}]\n",
	    "spec.volumes[2].name: duplicate name \"v\"" },
	{ "two volume types", C0 "  volumes: [{name: v, emptyDir: {}, hostPath: {path: /x}}]\n",
	    "spec.volumes[0]: may not specify more than 1 volume type" },
	{ "hostPath path", C0 "  volumes: [{name: v, hostPath: {type: Directory}}]\n",
	    "spec.volumes[0].hostPath.path: required" },
	{ "configMap name", C0 "  volumes: [{name: v, configMap: {}}]\n",
	    "spec.volumes[0].configMap.name: required" },
	{ "secret name", C0 "  volumes: [{name: v, secret: {}}]\n",
	    "spec.volumes[0].secret.secretName: required" },
	{ "pvc claim", C0 "  volumes: [{name: v, persistentVolumeClaim: {}}]\n",
	    "spec.volumes[0].persistentVolumeClaim.claimName: required" },
	{ "nfs server", C0 "  volumes: [{name: v, nfs: {path: /x}}]\n",
	    "spec.volumes[0].nfs.server: required" },
	{ "nfs path", C0 "  volumes: [{name: v, nfs: {server: s}}]\n",
	    "spec.volumes[0].nfs.path: required" },
	{ "csi driver", C0 "  volumes: [{name: v, csi: {}}]\n",
	    "spec.volumes[0].csi.driver: required" },
	{ "emptyDir medium", C0 "  volumes: [{name: v, emptyDir: {medium: Disk}}]\n",
	    "spec.volumes[0].emptyDir.medium: unsupported value \"Disk\"" },
	{ "emptyDir negative size", C0 "  volumes: [{name: v, emptyDir: {sizeLimit: -1}}]\n",
	    "spec.volumes[0].emptyDir.sizeLimit: must be greater than or equal to 0" },
	{ "defaultMode too big",
	    C0 "  volumes: [{name: v, secret: {secretName: s, defaultMode: 01000}}]\n",
	    "spec.volumes[0].secret.defaultMode: must be a file mode between 0 and 0777" },
	{ "item key", C0 "  volumes: [{name: v, configMap: {name: c, items: [{path: p}]}}]\n",
	    "spec.volumes[0].configMap.items[0].key: required" },
	{ "item path", C0 "  volumes: [{name: v, configMap: {name: c, items: [{key: k}]}}]\n",
	    "spec.volumes[0].configMap.items[0].path: required" },
	{ "item path escapes",
	    C0 "  volumes: [{name: v, secret: {secretName: s, items: "
	       "[{key: k, path: ../k}]}}]\n",
	    "spec.volumes[0].secret.items[0].path: must not start with '..'" },
	{ "item path with a .. element",
	    C0 "  volumes: [{name: v, secret: {secretName: s, items: "
	       "[{key: k, path: a/../../k}]}}]\n",
	    "spec.volumes[0].secret.items[0].path: must not contain '..'" },
	{ "item path absolute",
	    C0 "  volumes: [{name: v, configMap: {name: c, items: [{key: k, path: /etc/x}]}}]\n",
	    "spec.volumes[0].configMap.items[0].path: must be a relative path" },
	{ "item key with a slash",
	    C0 "  volumes: [{name: v, configMap: {name: c, items: [{key: a/b, path: p}]}}]\n",
	    "spec.volumes[0].configMap.items[0].key: a valid config key must consist of "
	    "alphanumeric characters, '-', '_' or '.'" },
	{ "item key ..",
	    C0 "  volumes: [{name: v, secret: {secretName: s, items: [{key: \"..\", path: p}]}}]\n",
	    "spec.volumes[0].secret.items[0].key: a valid config key must consist of "
	    "alphanumeric characters, '-', '_' or '.'" },
	{ "projected item key",
	    C0 "  volumes: [{name: v, projected: {sources: [{secret: {name: s, items: "
	       "[{key: ../k, path: p}]}}]}}]\n",
	    "spec.volumes[0].projected.sources[0].items[0].key: a valid config key must consist "
	    "of alphanumeric characters, '-', '_' or '.'" },
	{ "projected item path",
	    C0 "  volumes: [{name: v, projected: {sources: [{configMap: {name: c, items: "
	       "[{key: k, path: x/../../p}]}}]}}]\n",
	    "spec.volumes[0].projected.sources[0].items[0].path: must not contain '..'" },
	{ "valid item path with dots in a name",
	    C0 "  volumes: [{name: v, configMap: {name: c, items: [{key: a..b, path: x/a..b}]}}]\n",
	    NULL },
	{ "item mode",
	    C0 "  volumes: [{name: v, configMap: {name: c, items: [{key: k, path: p, "
	       "mode: -2}]}}]\n",
	    "spec.volumes[0].configMap.items[0].mode: must be a file mode between 0 and 0777" },
	/* valid edge cases */
	{ "valid minimal", C0, NULL },
	{ "valid sidecar with probes",
	    C0 "  initContainers:\n  - name: s\n    image: i\n"
	       "    restartPolicy: Always\n    readinessProbe: {exec: {command: [x]}}\n"
	       "    startupProbe: {tcpSocket: {port: 80}}\n",
	    NULL },
	{ "valid hostNetwork same ports",
	    C0 "    ports: [{containerPort: 80, hostPort: 80}, "
	       "{containerPort: 81}]\n  hostNetwork: true\n",
	    NULL },
	{ "valid ports at bounds",
	    C0 "    ports: [{containerPort: 1, hostPort: 0}, "
	       "{containerPort: 65535, hostPort: 65535, protocol: UDP}]\n",
	    NULL },
	{ "valid zero grace", C0 "  terminationGracePeriodSeconds: 0\n", NULL },
	{ "valid request equals limit",
	    C0 "    resources: {requests: {cpu: 1}, limits: {cpu: 1000m}}\n", NULL },
	{ "valid subdomain name",
	    "metadata: {name: a.b-c.d}\nspec:\n  containers: [{name: c, image: i}]\n", NULL },
	{ "valid labels",
	    "metadata: {name: p, labels: {example.com/x_y: A.b-c, e: \"\"}}\n"
	    "spec:\n  containers: [{name: c, image: i}]\n",
	    NULL },
	{ "valid named probe port",
	    C0 "    ports: [{containerPort: 80, name: http}]\n"
	       "    readinessProbe: {httpGet: {port: http}}\n",
	    NULL },
	{ "valid ephemeral target",
	    C0 "  ephemeralContainers: [{name: e, image: i, "
	       "targetContainerName: c}]\n",
	    NULL },
	{ "valid dnsPolicy None", C0 "  dnsPolicy: None\n  dnsConfig: {nameservers: [1.1.1.1]}\n",
	    NULL },
	{ "valid defaulted emptyDir",
	    C0 "    volumeMounts: [{name: v, mountPath: /v}]\n"
	       "  volumes: [{name: v}]\n",
	    NULL },
	{ "valid downwardAPI items",
	    C0 "  volumes: [{name: v, downwardAPI: {items: "
	       "[{path: labels, fieldRef: {fieldPath: metadata.labels}}]}}]\n",
	    NULL },
	{ "valid sleep hook zero", C0 "    lifecycle: {preStop: {sleep: {seconds: 0}}}\n", NULL },
};

static void
test_validate_table(void **state)
{
	size_t i;
	int    nfail = 0, ninvalid = 0;

	(void)state;
	for (i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		const struct vcase *c = &vcases[i];
		char                err[512] = "";
		struct pod         *p = pod_from_yaml(c->yaml, strlen(c->yaml), err, sizeof(err));
		int                 rc;

		if (p == NULL) {
			print_error("%s: decode failed: %s\n", c->name, err);
			nfail++;
			continue;
		}
		rc = pod_validate(p, err, sizeof(err));
		if (c->want == NULL && rc != 0) {
			print_error("%s: want valid, got %s\n", c->name, err);
			nfail++;
		} else if (c->want != NULL && rc == 0) {
			print_error("%s: want \"%s\", got valid\n", c->name, c->want);
			nfail++;
		} else if (c->want != NULL && strcmp(err, c->want) != 0) {
			print_error("%s:\n  got  %s\n  want %s\n", c->name, err, c->want);
			nfail++;
		}
		ninvalid += c->want != NULL;
		pod_unref(p);
	}
	print_message("%zu validation cases (%d invalid)\n", i, ninvalid);
	assert_int_equal(nfail, 0);
}

/* Hand-built pods (as other modules build them) are validated the same way. */
static void
test_validate_built(void **state)
{
	struct container c[2];
	struct pod       p;
	char             err[256];

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(c, 0, sizeof(c));
	p.name = "p";
	c[0].c_name = "a";
	c[0].c_image = "i";
	c[0].c_term_msg_path = "/dev/termination-log";
	c[1] = c[0];
	p.containers = c;
	p.ncontainers = 1;
	assert_int_equal(pod_validate(&p, err, sizeof(err)), 0);
	p.ncontainers = 2;
	assert_int_equal(pod_validate(&p, err, sizeof(err)), -1);
	assert_string_equal(err, "spec.containers[1].name: duplicate name \"a\"");
	assert_int_equal(pod_validate(NULL, err, sizeof(err)), -1);
	assert_int_equal(pod_validate(&p, NULL, 0), -1);
}

/* Thousands of containers, volumes, ports and mounts: duplicates are still found (the checks
 * sort instead of comparing every pair, so a hostile 1.5 MiB pod cannot stall validation).
 * Containers stop at the limit of 1000 per pod, which is refused past it. */
static void
test_validate_many(void **state)
{
	const size_t           n = 20000, nc = 1000;
	struct container      *cs = calloc(n, sizeof(*cs));
	struct volume         *vs = calloc(n, sizeof(*vs));
	struct volume_mount   *ms = calloc(n, sizeof(*ms));
	struct container_port *ps = calloc(n, sizeof(*ps));
	char(*names)[16] = calloc(n, sizeof(*names));
	char(*paths)[16] = calloc(n, sizeof(*paths));
	struct pod p;
	char       err[256];
	size_t     i;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.name = "p";
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "n%zu", i);
		snprintf(paths[i], sizeof(paths[i]), "/m%zu", i);
		cs[i].c_name = names[i];
		cs[i].c_image = "i";
		cs[i].c_term_msg_path = "/dev/termination-log";
		vs[i].v_name = names[i];
		vs[i].v_kind = VOL_EMPTY_DIR;
		vs[i].v_kind_name = "emptyDir";
		vs[i].v_default_mode = -1;
		ms[i].name = names[n - 1 - i];
		ms[i].mount_path = paths[i];
		ps[i].container_port = 1 + (int32_t)(i % 65535);
		ps[i].name = NULL;
	}
	cs[0].c_mounts = ms;
	cs[0].c_nmounts = n;
	cs[0].c_ports = ps;
	cs[0].c_nports = n;
	p.containers = cs;
	p.ncontainers = nc + 1;
	p.volumes = vs;
	p.nvolumes = n;
	assert_int_equal(pod_validate(&p, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "spec.containers: 1001 containers (init, regular and ephemeral "
	    "together) is over kletd's limit of 1000 per pod");
	p.ncontainers = nc - 1;
	p.init_containers = &cs[nc - 1];
	p.ninit_containers = 2;
	assert_int_equal(pod_validate(&p, err, sizeof(err)), -1);
	p.ninit_containers = 0;
	p.init_containers = NULL;
	p.ncontainers = nc;
	assert_int_equal(pod_validate(&p, err, sizeof(err)), 0);
	cs[nc - 1].c_name = names[3];
	assert_int_equal(pod_validate(&p, err, sizeof(err)), -1);
	assert_string_equal(err, "spec.containers[999].name: duplicate name \"n3\"");
	cs[nc - 1].c_name = names[nc - 1];
	vs[n - 2].v_name = names[7];
	assert_int_equal(pod_validate(&p, err, sizeof(err)), -1);
	assert_string_equal(err, "spec.volumes[19998].name: duplicate name \"n7\"");
	vs[n - 2].v_name = names[n - 2];
	ms[n - 5].mount_path = paths[2];
	assert_int_equal(pod_validate(&p, err, sizeof(err)), -1);
	assert_string_equal(
	    err, "spec.containers[0].volumeMounts[19995].mountPath: must be unique");
	ms[n - 5].mount_path = paths[n - 5];
	ms[n - 6].name = "nope";
	assert_int_equal(pod_validate(&p, err, sizeof(err)), -1);
	assert_string_equal(
	    err, "spec.containers[0].volumeMounts[19994].name: volume \"nope\" not found");
	free(cs);
	free(vs);
	free(ms);
	free(ps);
	free(names);
	free(paths);
}

/* Issue 20 case 8: the names that reach paths, and the path helper. */
static void
test_validate_names(void **state)
{
	static const struct {
		const char *uid;
		int         ok;
	} uids[] = {
		{ "9d1c1f7e-2d35-4c5d-9fb5-0d2c8b1f3a77", 1 },
		{ "0123456789abcdef0123456789abcdef", 1 },
		{ "u-1", 1 },
		{ "A.b_c", 1 },
		{ "../../../../tmp/X", 0 },
		{ "..", 0 },
		{ ".", 0 },
		{ "a/b", 0 },
		{ "", 0 },
		{ "-x", 0 },
		{ ".hidden", 0 },
		{ "a b", 0 },
		{ "a\nb", 0 },
	};
	char        err[256], *y, big[200];
	struct pod *p;
	size_t      i;

	(void)state;
	for (i = 0; i < sizeof(uids) / sizeof(uids[0]); i++)
		assert_int_equal(pod_uid_ok(uids[i].uid), uids[i].ok);
	memset(big, 'a', 129);
	big[129] = '\0';
	assert_int_equal(pod_uid_ok(big), 0);
	big[128] = '\0';
	assert_int_equal(pod_uid_ok(big), 1);
	assert_int_equal(pod_uid_ok(NULL), 0);
	y = "metadata: {name: p, namespace: ns, uid: \"../../../../tmp/X\"}\n"
	    "spec:\n  containers: [{name: c, image: i}]\n";
	p = pod_from_yaml(y, strlen(y), err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pod_validate(p, err, sizeof(err)), 0); /* the API's own checks */
	assert_int_equal(pod_validate_names(p, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "metadata.uid: \"../../../../tmp/X\" is not a valid UID (1 to 128 of "
	    "[A-Za-z0-9._-], beginning with a letter or digit)");
	free(p->uid);
	p->uid = strdup("u1");
	assert_int_equal(pod_validate_names(p, err, sizeof(err)), 0);
	free(p->name);
	p->name = strdup("..");
	assert_int_equal(pod_validate_names(p, err, sizeof(err)), -1);
	assert_string_equal(err, "metadata.name: \"..\" is not a DNS-1123 subdomain");
	free(p->name);
	p->name = strdup("p");
	free(p->ns);
	p->ns = strdup("../x");
	assert_int_equal(pod_validate_names(p, err, sizeof(err)), -1);
	assert_string_equal(err, "metadata.namespace: \"../x\" is not a DNS-1123 label");
	free(p->ns);
	p->ns = NULL;
	free(p->containers[0].c_name);
	p->containers[0].c_name = strdup("a/../../b");
	assert_int_equal(pod_validate_names(p, err, sizeof(err)), -1);
	assert_string_equal(err, "spec.containers[0].name: \"a/../../b\" is not a DNS-1123 label");
	pod_unref(p);
	/* A hostile UID is shown escaped and cut, never as raw bytes. */
	y = "{\"metadata\":{\"name\":\"p\",\"uid\":\"x\\u001b[2J\\nFAKE\"},"
	    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";
	p = pod_from_json(y, strlen(y), err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pod_validate_names(p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "\"x?[2J?FAKE\""));
	pod_unref(p);
	/* Keys. */
	assert_int_equal(pod_config_key_ok("ca.crt"), 1);
	assert_int_equal(pod_config_key_ok(".dotfile"), 1);
	assert_int_equal(pod_config_key_ok("..data"), 0);
	assert_int_equal(pod_config_key_ok("."), 0);
	assert_int_equal(pod_config_key_ok("a/b"), 0);
	assert_int_equal(pod_config_key_ok(""), 0);
}

static void
test_path_join(void **state)
{
	char *p;

	(void)state;
	p = path_join("/var/lib/kubelet", 2, "pods", "u1");
	assert_string_equal(p, "/var/lib/kubelet/pods/u1");
	free(p);
	p = path_join("/b", 0);
	assert_string_equal(p, "/b");
	free(p);
	assert_null(path_join("/b", 2, "pods", "../../../../tmp/X"));
	assert_null(path_join("/b", 2, "pods", ".."));
	assert_null(path_join("/b", 2, "pods", "."));
	assert_null(path_join("/b", 2, "pods", ""));
	assert_null(path_join("/b", 2, "pods", NULL));
	assert_null(path_join("/b", 3, "pods", "a/b", "c"));
	p = path_join("/b", 1, "..x");
	assert_string_equal(p, "/b/..x");
	free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_table),
		cmocka_unit_test(test_validate_built),
		cmocka_unit_test(test_validate_many),
		cmocka_unit_test(test_validate_names),
		cmocka_unit_test(test_path_join),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
