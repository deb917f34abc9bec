//! TPC-C (the DBT-2 workload of the consolidation study, issue 5): the nine tables, a parallel
//! COPY loader, the five transactions with client-side prepared SQL or, with `--procedures`,
//! as calls of server-side PL/pgSQL functions (see [`procedures`]), and the consistency
//! conditions of clause 3.3.2.
//!
//! Terminal model (clause 5.2): each client has a home warehouse and, for Stock-Level, a home
//! district ([`terminal::home`]); it draws transaction types from its own deck of 23 cards,
//! 10 New-Order, 10 Payment, 1 Order-Status, 1 Delivery, 1 Stock-Level, reshuffled when used up.
//! Every deck therefore gives 43.5% NO, 43.5% P and 4.3% each of the others: the deck of
//! clause 5.2.4.2, which meets the minimums of clause 5.2.3 (P ≥ 43%, OS, D, SL ≥ 4% each;
//! New-Order, the measured type, has no minimum and takes the rest). DBT-2's 45/43/4/4/4 is
//! the same idea with a 100-card deck.
//! Keying and think times are zero by default (the seed's "thinktime=zero"); `--think spec`
//! turns on the spec's (see [`terminal`]).
//!
//! Isolation: the session default (read committed unless `--isolation` says otherwise). Rows whose read-then-write must not race
//! are locked by the statement that changes them (`UPDATE ... RETURNING` on district,
//! warehouse, customer) or with `SELECT ... FOR UPDATE` in key order (stock), so concurrent
//! clients keep conditions 1-4 and take row locks in one global order (no deadlock cycles).
//!
//! One TPC-C transaction is exactly one server transaction (BEGIN/COMMIT around several
//! statements, or a single statement in its implicit transaction), so the run's committed
//! count matches `pg_stat_database.xact_commit`.

/// The customer id named by last name in warehouse `$w`, district `$d`: of the customers with
/// that last name sorted by C_FIRST, the one at position n/2 rounded up (clauses 2.5.2.2 and
/// 2.6.2.2). Arguments are the placeholders to use, e.g. `"$1"`.
macro_rules! customer_by_last {
    ($w:literal, $d:literal, $last:literal) => {
        concat!(
            "(SELECT x.c_id FROM (SELECT c_id, row_number() OVER (ORDER BY c_first) AS rn, \
               count(*) OVER () AS cnt FROM customer \
               WHERE c_w_id = ",
            $w,
            " AND c_d_id = ",
            $d,
            " AND c_last = ",
            $last,
            "::text) x WHERE x.rn = (x.cnt + 1) / 2)"
        )
    };
}

pub mod check;
pub mod delivery;
mod loader;
pub mod new_order;
pub mod order_status;
pub mod payment;
mod plugin;
pub mod procedures;
pub mod random;
mod rows;
pub mod rules;
pub mod stock_level;
pub mod terminal;

use std::time::Duration;

use rand::seq::SliceRandom;
use rand::Rng as _;

use super::{CheckOutcome, ClientSlot, Rng, TxnEnd, TxnType, WorkloadError};
use random::{nurand, C_ID_RUN, C_LAST_RUN};

pub use loader::{check_ready, prepare, prepare_with, Additions};
pub use plugin::{Options, ThinkMode, TPCC};
pub use rows::{Flavor, CH_SUPPLIERS};

/// Indexes of the types in [`TXN_TYPES`].
pub const NEW_ORDER: usize = 0;
pub const PAYMENT: usize = 1;
pub const ORDER_STATUS: usize = 2;
pub const DELIVERY: usize = 3;
pub const STOCK_LEVEL: usize = 4;

pub const TXN_TYPES: &[&str] = &[
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// Cards per type in one client deck (see the module comment).
const DECK_COUNTS: [(usize, usize); 5] = [
    (NEW_ORDER, 10),
    (PAYMENT, 10),
    (ORDER_STATUS, 1),
    (DELIVERY, 1),
    (STOCK_LEVEL, 1),
];

pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS_PER_DISTRICT: i64 = 3000;
pub const ITEMS: i64 = 100_000;

/// TPC-C on `warehouses` warehouses.
#[derive(Debug, Clone)]
pub struct Tpcc {
    types: Vec<TxnType>,
    pub warehouses: u32,
    /// Keying and think times of the terminal model.
    pub think: ThinkMode,
    /// Clients per home warehouse (see [`terminal::home`]).
    pub clients_per_warehouse: Option<u32>,
    /// Call the server-side functions instead of sending the SQL (`--procedures`).
    pub procedures: bool,
}

/// One client's terminal: home warehouse and district, and its mix deck.
#[derive(Debug, Clone)]
pub struct Client {
    pub w_id: i64,
    pub d_id: i64,
    deck: Vec<usize>,
    next: usize,
}

/// How a Payment or Order-Status names its customer (clause 2.5.1.2: 60% by last name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomerKey {
    Id(i64),
    Last(String),
}

/// The random input of one transaction, drawn before the first try so retries replay it.
#[derive(Debug, Clone)]
pub enum Args {
    NewOrder(new_order::Args),
    Payment(payment::Args),
    OrderStatus(order_status::Args),
    Delivery(delivery::Args),
    StockLevel(stock_level::Args),
}

impl Tpcc {
    pub fn new(warehouses: u32, options: &Options) -> Tpcc {
        Tpcc {
            types: TXN_TYPES
                .iter()
                .map(|t| TxnType::new(*t, crate::config::DEFAULT_ROLE))
                .collect(),
            warehouses: warehouses.max(1),
            think: options.think,
            clients_per_warehouse: options.clients_per_warehouse,
            procedures: options.procedures,
        }
    }

    pub fn keying_time(&self, txn: usize) -> Duration {
        match self.think {
            ThinkMode::Spec => terminal::keying(txn),
            ThinkMode::Zero => Duration::ZERO,
        }
    }

    pub fn think_time(&self, txn: usize, rng: &mut Rng) -> Duration {
        match self.think {
            ThinkMode::Spec => terminal::think(txn, rng),
            ThinkMode::Zero => Duration::ZERO,
        }
    }

    /// A client's terminal: its home from [`terminal::home`] and a fresh deck.
    pub fn client(&self, slot: ClientSlot) -> Client {
        let mut deck = Vec::with_capacity(23);
        for (txn, n) in DECK_COUNTS {
            deck.extend(std::iter::repeat_n(txn, n));
        }
        let (w_id, d_id) = terminal::home(slot.index, self.warehouses, self.clients_per_warehouse);
        Client {
            w_id,
            d_id,
            next: deck.len(),
            deck,
        }
    }

    /// The next card of the client's deck, reshuffling when it is used up.
    pub fn draw_txn(&self, client: &mut Client, rng: &mut Rng) -> usize {
        if client.next >= client.deck.len() {
            client.deck.shuffle(rng);
            client.next = 0;
        }
        client.next += 1;
        client.deck[client.next - 1]
    }

    pub fn draw_args(&self, txn: usize, client: &Client, rng: &mut Rng) -> Args {
        match txn {
            NEW_ORDER => Args::NewOrder(new_order::draw(self, client, rng)),
            PAYMENT => Args::Payment(payment::draw(self, client, rng)),
            ORDER_STATUS => Args::OrderStatus(order_status::draw(client, rng)),
            DELIVERY => Args::Delivery(delivery::Args {
                w_id: client.w_id,
                carrier_id: rng.gen_range(1..=10),
            }),
            _ => Args::StockLevel(stock_level::Args {
                w_id: client.w_id,
                d_id: client.d_id,
                threshold: rng.gen_range(10..=20),
            }),
        }
    }

    pub async fn execute(
        &self,
        conn: &mut pgwire::Connection,
        protocol: pgwire::Protocol,
        args: &Args,
    ) -> Result<TxnEnd, pgwire::Error> {
        if self.procedures {
            return procedures::run(conn, protocol, args).await;
        }
        match args {
            Args::NewOrder(a) => new_order::run(conn, protocol, a).await,
            Args::Payment(a) => payment::run(conn, protocol, a).await,
            Args::OrderStatus(a) => order_status::run(conn, protocol, a).await,
            Args::Delivery(a) => delivery::run(conn, protocol, a).await,
            Args::StockLevel(a) => stock_level::run(conn, protocol, a).await,
        }
    }

    /// A warehouse other than `home` (uniform), or `home` when there is only one.
    fn remote_warehouse(&self, home: i64, rng: &mut Rng) -> i64 {
        let w = i64::from(self.warehouses);
        if w == 1 {
            return home;
        }
        let other = rng.gen_range(1..w);
        if other >= home {
            other + 1
        } else {
            other
        }
    }
}

/// Customer selection of Payment and Order-Status (clauses 2.5.1.2, 2.6.1.2).
fn draw_customer(rng: &mut Rng) -> CustomerKey {
    if rng.gen_range(1..=100) <= 60 {
        CustomerKey::Last(random::last_name(nurand(rng, 255, 0, 999, C_LAST_RUN)))
    } else {
        CustomerKey::Id(nurand(rng, 1023, 1, CUSTOMERS_PER_DISTRICT, C_ID_RUN))
    }
}

/// An error for data a transaction needs but did not find (e.g. a customer id outside the
/// loaded range): the driver counts it as failed with class "other", never as a rollback.
fn missing(what: String) -> pgwire::Error {
    pgwire::Error {
        kind: pgwire::ErrorKind::Db {
            sqlstate: *b"02000",
            severity: "ERROR".into(),
            message: what,
            more: None,
        },
    }
}

/// Consistency conditions 1-4 (clause 3.3.2.1-4) on the target of `client`.
pub async fn check(client: &tokio_postgres::Client) -> Result<Vec<CheckOutcome>, WorkloadError> {
    check::run(client).await
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn each_deck_of_23_meets_the_mix_minimums() {
        let w = Tpcc::new(2, &Options::default());
        let mut c = w.client(ClientSlot { index: 3, count: 4 });
        assert_eq!((c.w_id, c.d_id), (2, 2));
        let mut rng = Rng::seed_from_u64(5);
        for _ in 0..3 {
            let mut n = [0usize; 5];
            for _ in 0..23 {
                n[w.draw_txn(&mut c, &mut rng)] += 1;
            }
            assert_eq!(n, [10, 10, 1, 1, 1]);
            assert!(n[NEW_ORDER] * 100 >= 43 * 23 && n[PAYMENT] * 100 >= 43 * 23);
            assert!(n[2..].iter().all(|&k| k * 100 >= 4 * 23));
        }
    }

    #[test]
    fn type_names_are_the_specs() {
        assert_eq!(TXN_TYPES[NEW_ORDER], "new_order");
        assert_eq!(TXN_TYPES[STOCK_LEVEL], "stock_level");
    }

    #[test]
    fn remote_warehouse_is_never_home() {
        let w = Tpcc::new(3, &Options::default());
        let mut rng = Rng::seed_from_u64(1);
        for _ in 0..1000 {
            let r = w.remote_warehouse(2, &mut rng);
            assert!(r == 1 || r == 3);
        }
        assert_eq!(
            Tpcc::new(1, &Options::default()).remote_warehouse(1, &mut rng),
            1
        );
    }

    #[test]
    fn statement_names_are_unique_and_prefixed() {
        let all = [
            new_order::BEGIN,
            new_order::ITEMS,
            new_order::DISTRICT,
            new_order::STOCK,
            new_order::INSERT,
            new_order::COMMIT,
            new_order::ROLLBACK,
            payment::BY_ID,
            payment::BY_LAST,
            order_status::BY_ID,
            order_status::BY_LAST,
            delivery::DELIVER,
            stock_level::COUNT_LOW,
            procedures::CALL_NEW_ORDER,
            procedures::CALL_PAYMENT,
            procedures::CALL_ORDER_STATUS,
            procedures::CALL_DELIVERY,
            procedures::CALL_STOCK_LEVEL,
        ];
        let mut names: Vec<&str> = all.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert!(names.iter().all(|n| n.starts_with("tpcc_")));
    }
}
