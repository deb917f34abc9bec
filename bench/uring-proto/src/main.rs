//! uring-proto: does io_uring cut a one-thread PostgreSQL driver's kernel time per transaction
//! against the epoll model tidebench's driver uses? Runs pgbench's `-S -M prepared` transaction
//! from N clients on ONE thread in one I/O model and prints one JSON line of CPU per transaction
//! (getrusage of this process over the measured window only, connection setup excluded).

mod epoll;
mod pg;
mod uring;

use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Command-line settings.
pub struct Config {
    pub mode: String,
    pub clients: usize,
    pub seconds: f64,
    pub socket_dir: String,
    pub port: u16,
    pub db: String,
    pub user: String,
    pub scale: u64,
    /// io_uring: link each Send to its Recv (IOSQE_IO_LINK).
    pub link: bool,
    /// io_uring: post no CQE for a Send that succeeds (IOSQE_CQE_SKIP_SUCCESS).
    pub skip_send_cqe: bool,
}

const USAGE: &str = "usage: uring-proto --mode epoll|uring|uring-coop|uring-defer [--clients N] \
[--seconds S] [--socket-dir DIR] [--port P] [--db NAME] [--user U] [--scale K] [--link 0|1] \
[--skip-send-cqe 0|1]";

fn flag_bool(v: &str) -> Option<bool> {
    match v {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

fn parse_args() -> Result<Config, String> {
    let mut c = Config {
        mode: String::new(),
        clients: 1,
        seconds: 5.0,
        socket_dir: "/tmp".into(),
        port: 5432,
        db: "postgres".into(),
        user: "postgres".into(),
        scale: 10,
        link: true,
        skip_send_cqe: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Err(USAGE.into());
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}\n{USAGE}");
        match flag.as_str() {
            "--mode" => c.mode = value.clone(),
            "--clients" => c.clients = value.parse().map_err(|e| bad(&e))?,
            "--seconds" => c.seconds = value.parse().map_err(|e| bad(&e))?,
            "--socket-dir" => c.socket_dir = value.clone(),
            "--port" => c.port = value.parse().map_err(|e| bad(&e))?,
            "--db" => c.db = value.clone(),
            "--user" => c.user = value.clone(),
            "--scale" => c.scale = value.parse().map_err(|e| bad(&e))?,
            "--link" => c.link = flag_bool(&value).ok_or_else(|| bad(&"expected 0 or 1"))?,
            "--skip-send-cqe" => {
                c.skip_send_cqe = flag_bool(&value).ok_or_else(|| bad(&"expected 0 or 1"))?
            }
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
    }
    if !matches!(
        c.mode.as_str(),
        "epoll" | "uring" | "uring-coop" | "uring-defer"
    ) {
        return Err(format!(
            "--mode must be epoll, uring, uring-coop or uring-defer\n{USAGE}"
        ));
    }
    if c.clients == 0 || c.scale == 0 || c.seconds <= 0.0 {
        return Err(format!(
            "--clients, --scale and --seconds must be positive\n{USAGE}"
        ));
    }
    Ok(c)
}

/// xorshift64*: the aid generator; its cost is the same in every mode.
pub struct Rng(u64);

impl Rng {
    /// A uniform aid in 1..=scale*100000 (modulo bias is negligible at these ranges).
    pub fn aid(&mut self, scale: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % (scale * 100_000) + 1
    }
}

/// Syscalls a mode made in the measured window, counted by the mode itself.
#[derive(Default, Clone, Copy)]
pub struct Calls {
    pub enter: u64,
    pub epoll_wait: u64,
    /// send()/recv() syscalls for epoll; Send/Recv completions (no syscall of their own) for
    /// io_uring.
    pub send: u64,
    pub recv: u64,
    /// Whether send and recv above are ring operations rather than syscalls.
    pub ring: bool,
    /// Waits (epoll_wait or io_uring_enter) that came back with nothing to do.
    pub empty_waits: u64,
}

impl Calls {
    fn total(&self) -> u64 {
        let io = if self.ring { 0 } else { self.send + self.recv };
        self.enter + self.epoll_wait + io
    }
}

fn rusage() -> libc::rusage {
    // SAFETY: getrusage fills the zeroed struct it is given.
    unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut r);
        r
    }
}

fn tv_us(t: libc::timeval) -> f64 {
    t.tv_sec as f64 * 1e6 + t.tv_usec as f64
}

/// The measured window: started once every client is connected and prepared, stopped at the
/// deadline (in-flight transactions then drain uncounted).
pub struct Window {
    start: Instant,
    ru: libc::rusage,
    pub deadline: Instant,
}

/// What a window measured.
pub struct Outcome {
    pub txns: u64,
    pub calls: Calls,
    elapsed: Duration,
    ru0: libc::rusage,
    ru1: libc::rusage,
}

impl Window {
    pub fn open(seconds: f64) -> Window {
        let start = Instant::now();
        Window {
            start,
            ru: rusage(),
            deadline: start + Duration::from_secs_f64(seconds),
        }
    }

    pub fn close(&self, txns: u64, calls: Calls) -> Outcome {
        let ru1 = rusage();
        Outcome {
            txns,
            calls,
            elapsed: self.start.elapsed(),
            ru0: self.ru,
            ru1,
        }
    }
}

fn report(c: &Config, o: &Outcome) -> String {
    let n = o.txns.max(1) as f64;
    let user = (tv_us(o.ru1.ru_utime) - tv_us(o.ru0.ru_utime)) / n;
    let sys = (tv_us(o.ru1.ru_stime) - tv_us(o.ru0.ru_stime)) / n;
    let vcsw = (o.ru1.ru_nvcsw - o.ru0.ru_nvcsw) as f64 / n;
    let ivcsw = (o.ru1.ru_nivcsw - o.ru0.ru_nivcsw) as f64 / n;
    let k = &o.calls;
    format!(
        "{{\"mode\":\"{}\",\"clients\":{},\"txns\":{},\"seconds\":{:.3},\"tps\":{:.1},\
         \"user_us_per_txn\":{:.3},\"sys_us_per_txn\":{:.3},\"total_us_per_txn\":{:.3},\
         \"vcsw_per_txn\":{:.4},\"ivcsw_per_txn\":{:.4},\"syscalls_per_txn\":{:.4},\
         \"io_uring_enter_per_txn\":{:.4},\"epoll_wait_per_txn\":{:.4},\"send_per_txn\":{:.4},\
         \"recv_per_txn\":{:.4},\"empty_waits_per_txn\":{:.4}}}",
        c.mode,
        c.clients,
        o.txns,
        o.elapsed.as_secs_f64(),
        o.txns as f64 / o.elapsed.as_secs_f64(),
        user,
        sys,
        user + sys,
        vcsw,
        ivcsw,
        k.total() as f64 / n,
        k.enter as f64 / n,
        k.epoll_wait as f64 / n,
        k.send as f64 / n,
        k.recv as f64 / n,
        k.empty_waits as f64 / n,
    )
}

fn run(c: &Config) -> Result<Outcome, String> {
    let socks: Vec<UnixStream> = (0..c.clients)
        .map(|_| pg::connect(&c.socket_dir, c.port, &c.user, &c.db))
        .collect::<Result<_, _>>()?;
    for s in &socks {
        s.set_nonblocking(true)
            .map_err(|e| format!("set_nonblocking: {e}"))?;
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let seed = now.map_or(0, |d| d.as_nanos() as u64) ^ (std::process::id() as u64) << 32;
    let mut rng = Rng(seed | 1);
    let outcome = match c.mode.as_str() {
        "epoll" => epoll::run(c, &socks, &mut rng)?,
        flavour => uring::run(c, &socks, &mut rng, flavour)?,
    };
    for mut s in socks {
        use std::io::Write;
        let _ = s.set_nonblocking(false);
        let _ = s.write_all(b"X\0\0\0\x04"); // Terminate
    }
    Ok(outcome)
}

fn main() {
    let c = match parse_args() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    match run(&c) {
        Ok(o) => println!("{}", report(&c, &o)),
        Err(e) => {
            eprintln!("uring-proto: {e}");
            std::process::exit(1);
        }
    }
}
