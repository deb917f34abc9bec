//! `run`'s flags for one shard of a run spread over several driver hosts (issue 26), and how
//! they become the plan's [`ShardPlan`]: the shard, the run id every shard shares, the start
//! instant, the clock bound. The plan's seed, when none was given, comes from the run id, so
//! every shard draws as one process would.

use std::path::PathBuf;
use std::time::SystemTime;

use clap::Args;

use crate::config::shard::{self, ShardPlan, DEFAULT_MAX_CLOCK_OFFSET};
use crate::config::RunPlan;

const SHARDS: &str = "Scale-out (one run on many driver hosts)";

#[derive(Debug, Args, Default)]
pub struct ShardArgs {
    /// Run one part of a run spread over several driver hosts: I/N (I from 0 to N-1), or
    /// auto/N under a launcher (the index from SLURM_PROCID or a Kubernetes Indexed Job's
    /// JOB_COMPLETION_INDEX). The shards' clients together are exactly the one-process run's;
    /// `tidebench merge` makes one result of their dirs
    #[arg(long, value_name = "I/N", help_heading = SHARDS)]
    pub shard: Option<String>,
    /// When every shard starts its clients: an RFC 3339 instant, or +30s@FILE (the first shard
    /// writes now+30s into FILE on storage the shards share, the others read it) [required
    /// with --shard]
    #[arg(long, value_name = "WHEN", help_heading = SHARDS, requires = "shard")]
    pub start_at: Option<String>,
    /// The id every shard of the run shares; merge refuses dirs of different runs [default:
    /// the run's name and start instant]
    #[arg(long, value_name = "ID", help_heading = SHARDS, requires = "shard")]
    pub run_id: Option<String>,
    /// The largest offset a shard's clock may have against a target server's [default: 50ms]
    #[arg(long, value_name = "DUR", help_heading = SHARDS, requires = "shard")]
    pub max_clock_offset: Option<String>,
}

/// What the shard flags decided before the plan is built: the shard and the seed the plan
/// should default to.
pub struct ShardStart {
    pub index: u32,
    pub count: u32,
    pub start_at: SystemTime,
}

impl ShardArgs {
    /// Reads `--shard` and `--start-at` (None without `--shard`).
    pub fn read(&self) -> Result<Option<ShardStart>, String> {
        let Some(text) = &self.shard else {
            return Ok(None);
        };
        let (index, count) = shard::parse_shard(text, &|k| std::env::var(k).ok())?;
        let when = self.start_at.as_deref().ok_or_else(|| {
            format!(
                "--shard {text} needs --start-at: every shard starts its clients at one instant \
                 (e.g. --start-at +30s@/shared/start, the same text on every shard)"
            )
        })?;
        let start_at = shard::parse_start_at(when, SystemTime::now())?;
        Ok(Some(ShardStart {
            index,
            count,
            start_at,
        }))
    }

    /// The run id: given, or the plan's name with the start instant.
    pub fn run_id(&self, name: &str, start: &ShardStart) -> String {
        self.run_id
            .clone()
            .unwrap_or_else(|| shard::default_run_id(name, start.start_at))
    }

    /// Lays the shard over `plan`: its part, and `{shard}` in `--out` made its index.
    pub fn apply(
        &self,
        plan: &mut RunPlan,
        start: ShardStart,
        run_id: String,
    ) -> Result<(), String> {
        let max_clock_offset = match &self.max_clock_offset {
            Some(t) => crate::config::duration::parse_duration(t)
                .map_err(|e| format!("--max-clock-offset {t}: {e}"))?,
            None => DEFAULT_MAX_CLOCK_OFFSET,
        };
        if let Some(out) = &plan.out {
            let text = out
                .to_string_lossy()
                .replace("{shard}", &start.index.to_string());
            plan.out = Some(PathBuf::from(text));
        }
        plan.shard = Some(ShardPlan {
            index: start.index,
            count: start.count,
            run_id,
            start_at: start.start_at,
            max_clock_offset,
            host: shard::host_name(),
        });
        Ok(())
    }
}
