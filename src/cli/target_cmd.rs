//! `tidebench target check TARGET`: where a target's benchmark sessions land (issue 39). It
//! resolves the target as a run does (libpq's rules, the host chosen among several), opens one
//! session as the driver opens its sessions, and prints the host, the server's address, port,
//! user, database, TLS and server version; it exits 2 with the cause and the fix when it cannot
//! connect. A password is never printed.

use crate::cli::CliError;
use crate::instance::Home;

const CHECK_AFTER_HELP: &str = "\
TARGET is what a run's --target takes: a libpq URI or keyword string (service files, PG*
variables and the password file apply as in libpq), or instance:NAME[/DB].

Examples:
  tidebench target check 'postgresql://app@db1,db2/bench?target_session_attrs=read-write'
  PGPORT=6432 tidebench target check postgresql://localhost/bench
  tidebench target check service=bench";

#[derive(Debug, clap::Subcommand)]
pub enum TargetCommand {
    /// Connect as a run's benchmark sessions would and print where the session landed
    #[command(after_help = CHECK_AFTER_HELP)]
    Check {
        /// A libpq connection string (URI or keywords) or instance:NAME[/DB]
        target: String,
    },
}

pub fn run(cmd: TargetCommand, home: &Home) -> Result<u8, CliError> {
    let TargetCommand::Check { target } = cmd;
    let spec = crate::config::TargetSpec::parse(&target)
        .map_err(|m| CliError::usage(format!("target: {m}")))?;
    let rt = super::runtime()?;
    let resolved = rt.block_on(crate::runner::resolve_target(&spec, home))?;
    // The session runs on its own evloop loop, off the tokio runtime, as a driver thread's.
    let landing = std::thread::scope(|s| s.spawn(|| resolved.landing()).join())
        .map_err(|_| CliError::usage("the session's thread failed"))??;
    for note in &resolved.notes {
        eprintln!("note: {note}");
    }
    let tls = landing.tls.as_deref().unwrap_or("no");
    println!("target:   {}", resolved.label);
    println!("host:     {}", landing.host);
    println!(
        "address:  {}",
        if landing.address.is_empty() {
            "(unix socket)"
        } else {
            &landing.address
        }
    );
    println!("port:     {}", landing.port);
    println!("user:     {}", landing.user);
    println!("database: {}", landing.database);
    println!("tls:      {tls}");
    println!("server:   PostgreSQL {}", landing.server_version);
    Ok(0)
}
