//! The objects of a sharded run, as YAML trees: what each field is for is said in a comment
//! where a reader of the applied file would ask.

use super::{label_value, KubeOptions, LaunchSpec, RESULTS_MOUNT, RUN_AS, WORKDIR};
use crate::launch::shell::{fill, merge_finished};
use crate::launch::yaml::{entry, Entry, Node};
use crate::launch::{merge_command, shard_command, shell_line, shell_quote};
use crate::launch::{PROGRAM, SUMMARY_FILE};

/// How often the merge pod looks for the shards' summaries.
const POLL_SECS: u64 = 5;
/// The merge pod's `sh` script; `@NAME@` are filled in. Kubernetes starts the merge Job with
/// the shards, so it waits for them itself.
const MERGE_SCRIPT: &str = r#"# Jobs do not wait for each other: wait here until every shard's dir holds @SUMMARY@.
finished() {
  for d in @DIRS@; do
    [ -f "$d/@SUMMARY@" ] || return 1
  done
}
waited=0
until finished; do
  if [ "$waited" -ge @LIMIT@ ]; then
    echo "tidebench: not every shard finished within @LIMIT@ s; merging those that did, marked incomplete" >&2
@MERGE_FINISHED@
    exit 1
  fi
  sleep @POLL@
  waited=$((waited + @POLL@))
done
exec @MERGE@
"#;
/// The run file's key in its ConfigMap.
const RUN_FILE_KEY: &str = "run.toml";

/// What every object of one run shares.
pub(super) struct Objects<'a> {
    pub spec: &'a LaunchSpec,
    pub image: &'a str,
    pub claim: &'a str,
    pub opts: &'a KubeOptions,
    /// The shard Job's name, the others' stem.
    pub job: String,
}

impl Objects<'_> {
    /// The run file, carried into the pods.
    pub fn config_map(&self, text: &str) -> Vec<Entry> {
        vec![
            entry("apiVersion", "v1")
                .comment("The run file, mounted into every shard where its command names it."),
            entry("kind", "ConfigMap"),
            entry(
                "metadata",
                self.metadata(format!("{}-run", self.job), "run-file"),
            ),
            entry("data", vec![entry(RUN_FILE_KEY, text)]),
        ]
    }

    /// The shards: one Indexed Job, its pods all at once. `run_file` is where the ConfigMap's
    /// run file is mounted, when there is one.
    pub fn shard_job(&self, run_file: Option<&str>) -> Vec<Entry> {
        let spec = self.spec;
        let n = spec.drivers;
        let command = shard_command(spec, &spec.auto_shard(), &spec.start_at());
        let mut container = vec![
            entry("name", "tidebench"),
            entry("image", self.image),
            entry("command", command).comment(
                "The command every Slurm task runs too: the index comes from \
                 JOB_COMPLETION_INDEX,\nthe start instant from the first shard to write it on \
                 the claim.",
            ),
            entry("workingDir", WORKDIR),
        ];
        if let Some(secret) = &self.opts.env_secret {
            let from = vec![entry("secretRef", vec![entry("name", secret.as_str())])];
            container.push(entry("envFrom", vec![Node::Map(from)]));
        }
        let mut mounts = vec![results_mount()];
        let mut volumes = vec![self.results_volume()];
        if let Some(at) = run_file {
            mounts.push(Node::Map(vec![
                entry("name", "run-file"),
                entry("mountPath", at),
                entry("subPath", RUN_FILE_KEY),
                entry("readOnly", true),
            ]));
            volumes.push(Node::Map(vec![
                entry("name", "run-file"),
                entry(
                    "configMap",
                    vec![entry("name", format!("{}-run", self.job))],
                ),
            ]));
        }
        container.push(entry("volumeMounts", mounts));
        let mkdir = vec![
            entry("name", "results-dir"),
            entry("image", self.image),
            entry(
                "command",
                vec!["mkdir".to_string(), "-p".into(), spec.results_dir.clone()],
            ),
            entry("volumeMounts", vec![results_mount()]),
        ];
        let extra = vec![
            entry("affinity", self.spread()).comment(
                "Shards on different nodes when there are enough: two on one node share its \
                 CPUs.",
            ),
            entry("initContainers", vec![Node::Map(mkdir)])
                .comment("The results dir, for the start file the first shard writes in it."),
        ];
        let job_spec = vec![
            entry("completionMode", "Indexed")
                .comment("Kubernetes gives each pod its index in JOB_COMPLETION_INDEX (0 to N-1)."),
            entry("completions", n),
            entry("parallelism", n)
                .comment("All at once: a shard that waits for a slot would miss the common start."),
            entry("backoffLimitPerIndex", 0u32).comment(
                "No retries (a retried shard would start late), and a failed shard does not \
                 stop\nthe others: the merge keeps what they measured (Kubernetes 1.29 or \
                 later).",
            ),
            entry(
                "template",
                self.template("shard", container, volumes, extra),
            ),
        ];
        vec![
            entry("apiVersion", "batch/v1").comment(&format!(
                "The {n} shard(s) of run {}, all at once.",
                spec.run_id
            )),
            entry("kind", "Job"),
            entry("metadata", self.metadata(self.job.clone(), "shard")),
            entry("spec", job_spec),
        ]
    }

    /// The merge: a Job whose pod waits for the shards on the claim, then merges.
    pub fn merge_job(&self) -> Vec<Entry> {
        let script = self.merge_script();
        let container = vec![
            entry("name", "merge"),
            entry("image", self.image),
            entry("command", vec!["sh".to_string(), "-c".into(), script]).comment(
                "Waits for the shards (at most --merge-timeout), then merges; fails when one is \
                 missing.",
            ),
            entry("volumeMounts", vec![results_mount()]),
        ];
        let volumes = vec![self.results_volume()];
        vec![
            entry("apiVersion", "batch/v1").comment(&format!(
                "Merges the shards of run {} into one results dir once they have all finished.",
                self.spec.run_id
            )),
            entry("kind", "Job"),
            entry(
                "metadata",
                self.metadata(format!("{}-merge", self.job), "merge"),
            ),
            entry(
                "spec",
                vec![
                    entry("backoffLimit", 0u32),
                    entry(
                        "template",
                        self.template("merge", container, volumes, Vec::new()),
                    ),
                ],
            ),
        ]
    }

    /// `sh` that waits until every shard's dir holds its summary (a results dir appears whole,
    /// by a rename, when its run ends), then runs merge; after the timeout it merges what
    /// finished and fails, as a failed shard's Job does.
    fn merge_script(&self) -> String {
        let spec = self.spec;
        let merge = shell_line(&merge_command(spec));
        let dirs: Vec<String> = (0..spec.drivers)
            .map(|i| shell_quote(&spec.shard_dir(i)))
            .collect();
        let limit = self.opts.merge_timeout.as_secs().max(POLL_SECS);
        fill(
            MERGE_SCRIPT,
            &[
                ("DIRS", &dirs.join(" ")),
                ("SUMMARY", SUMMARY_FILE),
                ("LIMIT", &limit.to_string()),
                ("POLL", &POLL_SECS.to_string()),
                ("MERGE", &merge),
                ("MERGE_FINISHED", &merge_finished(spec, PROGRAM, "    ")),
            ],
        )
    }

    fn metadata(&self, name: String, component: &str) -> Node {
        let mut meta = vec![entry("name", name)];
        if let Some(ns) = &self.opts.namespace {
            meta.push(entry("namespace", ns.as_str()));
        }
        meta.push(entry("labels", self.labels(component)));
        Node::Map(meta)
    }

    fn labels(&self, component: &str) -> Vec<Entry> {
        vec![
            entry("app.kubernetes.io/name", "tidebench"),
            entry("app.kubernetes.io/component", component),
            entry("tidebench/run-id", label_value(&self.spec.run_id)),
        ]
    }

    /// A pod template both Jobs share the shape of: no restarts, the image's user, the claim
    /// writable for its group.
    fn template(
        &self,
        component: &str,
        container: Vec<Entry>,
        volumes: Vec<Node>,
        extra: Vec<Entry>,
    ) -> Node {
        let security = vec![
            entry("runAsNonRoot", true),
            entry("runAsUser", RUN_AS),
            entry("runAsGroup", RUN_AS),
            entry("fsGroup", RUN_AS),
            // Changes the claim's ownership once, not every file on every start.
            entry("fsGroupChangePolicy", "OnRootMismatch"),
        ];
        let mut pod = vec![
            entry("restartPolicy", "Never"),
            entry("securityContext", security),
        ];
        pod.extend(extra);
        pod.push(entry("containers", vec![Node::Map(container)]));
        pod.push(entry("volumes", volumes));
        Node::Map(vec![
            entry("metadata", vec![entry("labels", self.labels(component))]),
            entry("spec", pod),
        ])
    }

    /// Prefers nodes without another shard of this run; never refuses to schedule.
    fn spread(&self) -> Node {
        let selector = vec![entry(
            "matchLabels",
            vec![
                entry("tidebench/run-id", label_value(&self.spec.run_id)),
                entry("app.kubernetes.io/component", "shard"),
            ],
        )];
        let term = vec![
            entry("labelSelector", selector),
            entry("topologyKey", "kubernetes.io/hostname"),
        ];
        let preferred = vec![entry("weight", 100u32), entry("podAffinityTerm", term)];
        Node::Map(vec![entry(
            "podAntiAffinity",
            vec![entry(
                "preferredDuringSchedulingIgnoredDuringExecution",
                vec![Node::Map(preferred)],
            )],
        )])
    }

    fn results_volume(&self) -> Node {
        Node::Map(vec![
            entry("name", "results"),
            entry(
                "persistentVolumeClaim",
                vec![entry("claimName", self.claim)],
            ),
        ])
    }
}

fn results_mount() -> Node {
    Node::Map(vec![
        entry("name", "results"),
        entry("mountPath", RESULTS_MOUNT),
    ])
}
