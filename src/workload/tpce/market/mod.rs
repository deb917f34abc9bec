//! tpce's market exchange emulator as the driver sees it: one [`Market`] per (group, set),
//! implementing [`Emulator`]. The rules live in [`exchange`] (pure, run-time milliseconds);
//! this file puts them on the run's clock, behind a lock shared by the clients of every driver
//! thread, and runs the four emulated transactions: Trade-Result and Market-Feed (the market's),
//! Data-Maintenance and Trade-Cleanup (the driver's timed work in TPC-E, kept here so that they
//! too go to the set they belong to).

pub mod exchange;

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use self::exchange::{Exchange, Work};
use super::gen::clock::run_start;
use super::inputs::Inputs;
use super::mix::{DATA_MAINTENANCE, MARKET_FEED, TRADE_CLEANUP, TRADE_RESULT};
use super::names::symbol;
use super::txn::{self, data_maintenance, trade_cleanup, Order};
use crate::metrics::ErrorClass;
use crate::workload::{Backlog, Emulator, Job, Rng, TxnEnd, TxnFuture};
use rand::SeedableRng;

/// What the market needs from its workload: the data's generator inputs and the back end.
#[derive(Debug)]
pub struct Setting {
    pub inputs: Arc<Inputs>,
    pub procedures: bool,
    /// Security id by symbol, built once per workload.
    pub ids: Arc<HashMap<String, u64>>,
}

impl Setting {
    pub fn new(inputs: Arc<Inputs>, procedures: bool) -> Setting {
        let seed = inputs.seed();
        let ids = (1..=inputs.scale().securities())
            .map(|s| (symbol(seed, s), s))
            .collect();
        Setting {
            inputs,
            procedures,
            ids: Arc::new(ids),
        }
    }
}

/// A job's inputs: the exchange's work, when it fell due (run ms), and for Data-Maintenance
/// the row it changes (drawn when the job is taken).
struct JobInputs {
    work: Work,
    due: i64,
    maintenance: Option<data_maintenance::Args>,
}

/// One (group, set)'s market.
#[derive(Debug)]
pub struct Market {
    setting: Arc<Setting>,
    state: Mutex<Exchange>,
    /// Draws Data-Maintenance's rows.
    rng: Mutex<Rng>,
    origin: OnceLock<Instant>,
    /// The exchange's next due time in run ms (`i64::MAX`: none), readable without the lock.
    next_due: AtomicI64,
}

impl Market {
    /// `once_per_database`: this market also runs Trade-Cleanup and Data-Maintenance, the work
    /// that must happen once per database however many driver processes share the run.
    pub fn new(setting: Arc<Setting>, seed: u64, once_per_database: bool) -> Market {
        let scale = setting.inputs.scale();
        let exchange = Exchange::new(
            seed,
            setting.inputs.seed(),
            run_start(scale.trade_days()),
            scale.securities(),
            Arc::clone(&setting.ids),
            once_per_database,
        );
        let exchange = if once_per_database {
            exchange
        } else {
            exchange.without_maintenance()
        };
        let next = exchange.next_due();
        Market {
            setting,
            state: Mutex::new(exchange),
            rng: Mutex::new(Rng::seed_from_u64(seed ^ 0x6d61_696e)),
            origin: OnceLock::new(),
            next_due: AtomicI64::new(next),
        }
    }

    /// Run milliseconds at `now` (0 before the start).
    fn ms(&self, now: Instant) -> i64 {
        self.origin
            .get()
            .map_or(0, |o| now.saturating_duration_since(*o).as_millis() as i64)
    }

    fn instant(&self, ms: i64) -> Instant {
        let origin = self.origin.get().copied().unwrap_or_else(Instant::now);
        origin + Duration::from_millis(ms.max(0) as u64)
    }

    /// Runs `f` on the exchange and republishes its next due time.
    fn with<T>(&self, f: impl FnOnce(&mut Exchange) -> T) -> T {
        let mut state = self.lock();
        let out = f(&mut state);
        self.next_due.store(state.next_due(), Ordering::Release);
        out
    }

    fn lock(&self) -> MutexGuard<'_, Exchange> {
        // A panic elsewhere must not take the market with it: the state stays usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Orders a committed Trade-Order (or Market-Feed) handed over.
    pub fn submit(&self, orders: &[Order]) {
        if orders.is_empty() {
            return;
        }
        let now = self.ms(Instant::now());
        self.with(|x| {
            for o in orders {
                x.submit(o, now);
            }
        });
    }

    /// What the exchange has done so far (for tests and results).
    pub fn counts(&self) -> exchange::Counts {
        self.lock().counts
    }
}

impl Emulator for Market {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn start(&self, at: Instant) {
        let _ = self.origin.set(at);
    }

    fn starting(&self) -> bool {
        self.lock().starting()
    }

    fn has_due(&self, now: Instant) -> bool {
        self.origin.get().is_some() && self.next_due.load(Ordering::Acquire) <= self.ms(now)
    }

    fn take_due(&self, now: Instant) -> Option<Job> {
        let now_ms = self.ms(now);
        let (due, work) = self.with(|x| x.take(now_ms))?;
        let txn = match work {
            Work::Cleanup => TRADE_CLEANUP,
            Work::Maintenance(_) => DATA_MAINTENANCE,
            Work::Result(_) => TRADE_RESULT,
            Work::Feed(_) => MARKET_FEED,
        };
        let maintenance = match work {
            Work::Maintenance(t) => {
                let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
                let table = data_maintenance::Table::ALL[usize::from(t) % 12];
                Some(data_maintenance::draw(
                    &self.setting.inputs,
                    &mut rng,
                    table,
                ))
            }
            _ => None,
        };
        Some(Job {
            txn,
            due: self.instant(due),
            inputs: Box::new(JobInputs {
                work,
                due,
                maintenance,
            }),
        })
    }

    fn execute<'a>(
        &'a self,
        job: &'a Job,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
    ) -> TxnFuture<'a> {
        Box::pin(async move {
            let Some(inputs) = job.inputs.downcast_ref::<JobInputs>() else {
                return Err(txn::missing("a job of another emulator".into()));
            };
            let p = self.setting.procedures;
            let out = match &inputs.work {
                Work::Result(e) => {
                    let args = txn::trade_result::Args {
                        t_id: e.t_id,
                        price_cents: e.price_cents,
                    };
                    txn::trade_result::run(conn, protocol, &args, p).await?
                }
                Work::Feed(entries) => {
                    let args = txn::market_feed::Args {
                        entries: entries.clone(),
                    };
                    txn::market_feed::run(conn, protocol, &args, p).await?
                }
                Work::Maintenance(_) => match &inputs.maintenance {
                    Some(args) => data_maintenance::run(conn, protocol, args, p).await?,
                    None => return Err(txn::missing("a maintenance job without its row".into())),
                },
                Work::Cleanup => {
                    let args = trade_cleanup::Args::for_scale(self.setting.inputs.scale());
                    trade_cleanup::run(conn, protocol, &args).await?
                }
            };
            if out.end == TxnEnd::Committed {
                let now = self.ms(Instant::now());
                self.with(|x| {
                    if let Work::Result(e) = &inputs.work {
                        x.traded(e, now);
                    }
                    for o in &out.orders {
                        // A triggered request goes back to the market as an order to execute.
                        x.submit(
                            &Order {
                                pending: false,
                                ..o.clone()
                            },
                            now,
                        );
                    }
                    x.done(&inputs.work);
                });
            }
            Ok(out.end)
        })
    }

    fn failed(&self, job: Job, class: ErrorClass, now: Instant) {
        let now = self.ms(now);
        if let Ok(inputs) = job.inputs.downcast::<JobInputs>() {
            self.with(|x| x.failed(inputs.work, inputs.due, class, now));
        }
    }

    fn backlog(&self, now: Instant) -> Backlog {
        let now = self.ms(now);
        let x = self.lock();
        let (due, lag) = x.overdue(now);
        Backlog {
            due,
            lag: Duration::from_millis(lag.max(0) as u64),
            waiting: x.waiting(now),
            issued: x.counts.issued,
            abandoned: x.counts.abandoned + x.counts.unreachable,
        }
    }
}
