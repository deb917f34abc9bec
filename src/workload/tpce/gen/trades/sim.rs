//! The simulated market of one load unit: its orders arrive in submission order, wait in a
//! queue until they complete, and complete in (completion time, t_id) order against the
//! unit's holdings, writing each trade's rows as it completes. At the end the open lots, their
//! summaries and the unit's brokers are written.
//!
//! Memory is the unit's [`UnitBook`], its open lots and the orders still pending (those
//! submitted in the last 15 minutes at most), never the trade count: TPC-E's 300 trade days
//! are 17 million trades per unit (tpce.md §2.5).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::workload::tpce::gen::ids::trade_index;
use crate::workload::tpce::gen::{Batch, BATCH_BYTES};
use crate::workload::tpce::names::broker_name;
use crate::workload::tpce::rules::money;
use crate::workload::tpce::scale::Scale;

use super::book::UnitBook;
use super::lots::{self, Fill, Holding};
use super::order::{draw, submitted_at, LoadedTrade};
use super::rows;

/// An order waiting to complete; the heap's top is the earliest (completion time, t_id).
#[derive(Debug)]
struct Pending(LoadedTrade);

impl Pending {
    fn key(&self) -> (i64, u64) {
        (self.0.completed.0, self.0.t_id)
    }
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Trading,
    /// Writing the open lots of the account at this index.
    Holdings(usize),
    Brokers,
    Done,
}

pub struct Sim {
    seed: u64,
    scale: Scale,
    lu: u64,
    book: UnitBook,
    /// The unit's next trade (from 0) to submit, and how many it has.
    next: u64,
    trades: u64,
    pending: BinaryHeap<Pending>,
    /// Open lots by account (index in the book) and security slot.
    lots: Vec<Vec<VecDeque<Holding>>>,
    /// Completed trades and their commission in cents, by broker of the unit.
    broker_trades: Vec<u64>,
    broker_commission: Vec<i64>,
    phase: Phase,
    scratch: String,
}

impl Sim {
    pub fn new(seed: u64, scale: &Scale, lu: u64) -> Sim {
        let book = UnitBook::new(seed, scale, lu);
        let lots = book
            .accounts
            .iter()
            .map(|a| vec![VecDeque::new(); a.held.len()])
            .collect();
        let brokers = book.brokers.len();
        Sim {
            seed,
            scale: *scale,
            lu,
            book,
            next: 0,
            trades: super::trades_in_unit(scale, lu),
            pending: BinaryHeap::new(),
            lots,
            broker_trades: vec![0; brokers],
            broker_commission: vec![0; brokers],
            phase: Phase::Trading,
            scratch: String::with_capacity(128),
        }
    }

    /// Submits the next order or completes the earliest pending one, whichever comes first;
    /// once both are exhausted, moves on to the holdings.
    fn step(&mut self, batch: &mut Batch) {
        let index = (self.next < self.trades)
            .then(|| trade_index(self.next, self.lu, self.scale.load_units()));
        let submit_at = index.map(|i| submitted_at(&self.scale, i));
        let due = self
            .pending
            .peek()
            .is_some_and(|p| submit_at.is_none_or(|at| p.0.completed <= at));
        if due {
            if let Some(Pending(t)) = self.pending.pop() {
                self.complete(&t, batch);
            }
        } else if let Some(index) = index {
            let t = draw(self.seed, &self.scale, index, &mut self.book);
            self.pending.push(Pending(t));
            self.next += 1;
        } else {
            self.phase = Phase::Holdings(0);
        }
    }

    /// Applies trade `t` to its holdings and writes its rows.
    fn complete(&mut self, t: &LoadedTrade, batch: &mut Batch) {
        let at = self.book.account_index(t.ca_id);
        let account = &self.book.accounts[at];
        let security = &self.book.securities[account.local[t.slot]];
        let fill = Fill {
            t_id: t.t_id as i64,
            dts: t.completed,
            price: t.price,
            qty: t.qty,
            sell: t.is_sell(),
            lifo: t.lifo,
        };
        let settled = lots::apply(&mut self.lots[at][t.slot], &fill);
        for c in &settled.changes {
            rows::holding_history(batch, c.id, t.t_id, c.before, c.after);
        }
        let terms = account.terms.for_trade(t.tt, t.qty, security.exchange);
        let paid = money::settle(t.is_sell(), t.qty, t.price, &terms, settled.gain_cents);
        let executor = &self.book.customer(t.executor).name;
        rows::completed_trade(
            batch,
            t,
            &paid,
            (&security.symbol, &security.name, executor),
            &mut self.scratch,
        );
        self.broker_trades[account.broker] += 1;
        self.broker_commission[account.broker] += paid.commission;
    }

    /// Writes (and frees) the open lots of the account at index `at` and their summaries.
    fn write_holdings(&mut self, at: usize, batch: &mut Batch) {
        let account = &self.book.accounts[at];
        for (slot, lots) in self.lots[at].iter_mut().enumerate() {
            if lots.is_empty() {
                continue;
            }
            let symbol = &self.book.securities[account.local[slot]].symbol;
            for held in lots.iter() {
                rows::holding(batch, account.ca_id, symbol, held);
            }
            rows::holding_summary(batch, account.ca_id, symbol, lots::total(lots));
            *lots = VecDeque::new();
        }
    }

    fn write_brokers(&self, batch: &mut Batch) {
        for (k, &b_id) in self.book.brokers.iter().enumerate() {
            let name = broker_name(self.seed, b_id);
            rows::broker(
                batch,
                b_id,
                &name,
                self.broker_trades[k],
                self.broker_commission[k],
            );
        }
    }
}

impl Iterator for Sim {
    type Item = Batch;

    fn next(&mut self) -> Option<Batch> {
        let mut batch = Batch::new();
        while batch.bytes() < BATCH_BYTES {
            match self.phase {
                Phase::Trading => self.step(&mut batch),
                Phase::Holdings(at) if at < self.lots.len() => {
                    self.write_holdings(at, &mut batch);
                    self.phase = Phase::Holdings(at + 1);
                }
                Phase::Holdings(_) => self.phase = Phase::Brokers,
                Phase::Brokers => {
                    self.write_brokers(&mut batch);
                    self.phase = Phase::Done;
                }
                Phase::Done => break,
            }
        }
        (!batch.is_empty()).then_some(batch)
    }
}
