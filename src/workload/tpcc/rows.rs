//! The rows of a TPC-C load (clause 4.3.3.1) as text COPY: one loader session takes units of
//! work until none is left, unit 0 being the item table and unit w every row of warehouse w.
//!
//! Text COPY rather than binary: the rows are mostly strings (which binary COPY does not make
//! cheaper to parse) and numerics (whose binary form is awkward to build).
//!
//! A load for CH-benCHmark ([`Flavor::Ch`], `workload::ch`) departs from clause 4.3.3.1 in
//! the ways its queries need, and only those: STOCK and CUSTOMER end with CH's two join
//! columns; the loaded order lines look like New-Order's (an item by NURand, a quantity of 1
//! to 10, clause 2.4.1.5, and an amount even once delivered) and are counted into
//! S_ORDER_CNT and S_YTD, as if New-Order had entered them; a delivered order was entered
//! before the load's instant (one hour per order before the first undelivered one), so it
//! was delivered after it was entered; and a customer's C_BALANCE owes their delivered
//! lines, as Delivery would have made it.

use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::SinkExt;
use rand::seq::SliceRandom;
use rand::{Rng as _, SeedableRng};
use tokio_postgres::{Client, CopyInSink};

use super::random::{
    nurand, push_astring, push_data, push_decimal, push_last_name, push_nstring, push_zip,
    OL_I_ID_RUN,
};
use super::{CUSTOMERS_PER_DISTRICT, DISTRICTS, ITEMS};
use crate::target::ResolvedTarget;
use crate::workload::kit::staging::{connect_staging, db_error};
use crate::workload::{Rng, WorkloadError};

/// Orders per district, and the first order id still in NEW-ORDER (clause 4.3.3.1).
pub const ORDERS_PER_DISTRICT: i64 = 3000;
const FIRST_NEW_ORDER: i64 = 2101;
/// CopyData batch size, as pgbench's loader uses.
const CHUNK_BYTES: usize = 256 * 1024;

/// Which rows a load writes: TPC-C's own, or CH-benCHmark's (see the module notes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Flavor {
    #[default]
    Tpcc,
    Ch,
}

/// CH-benCHmark's suppliers: STOCK's S_SU_SUPPKEY is (S_W_ID × S_I_ID) mod this.
pub const CH_SUPPLIERS: i64 = 10_000;

/// What every loader session needs.
pub struct Shared {
    /// The load's timestamp (C_SINCE, O_ENTRY_D, ...), as SQL text.
    pub now: String,
    /// The same instant as seconds since 1970 (the wall clock read as UTC), for the dates a
    /// CH load writes before it.
    pub now_epoch: i64,
    pub flavor: Flavor,
    /// The load's C for C_LAST (clause 2.1.6).
    pub c_load: i64,
    pub seed: u64,
    /// Rows sent so far, for the progress line.
    pub counter: Arc<AtomicU64>,
}

/// One loader session: takes units until none is left; returns the rows it loaded.
pub async fn load_units(
    target: &ResolvedTarget,
    next: Arc<AtomicU32>,
    warehouses: u32,
    shared: Shared,
) -> Result<u64, WorkloadError> {
    let client = connect_staging(target).await?;
    let mut rows = 0;
    loop {
        let unit = next.fetch_add(1, Ordering::Relaxed);
        if unit > warehouses {
            return Ok(rows);
        }
        let mut rng = Rng::seed_from_u64(shared.seed ^ u64::from(unit).wrapping_mul(0x9e37));
        let mut load = Loader {
            client: &client,
            target,
            shared: &shared,
            rng: &mut rng,
        };
        rows += if unit == 0 {
            load.items().await?
        } else {
            load.warehouse(i64::from(unit)).await?
        };
    }
}

/// One COPY in progress: rows are appended as text to `buf`, sent in ~256 KiB chunks.
struct Copy<'a> {
    sink: Pin<Box<CopyInSink<Bytes>>>,
    buf: String,
    rows: u64,
    counter: &'a AtomicU64,
    target: &'a ResolvedTarget,
    what: String,
}

impl Copy<'_> {
    /// Ends the current row; sends the buffer when it is full.
    async fn end_row(&mut self) -> Result<(), WorkloadError> {
        self.buf.pop(); // the trailing tab of the last field
        self.buf.push('\n');
        self.rows += 1;
        if self.buf.len() >= CHUNK_BYTES {
            self.send().await?;
        }
        Ok(())
    }

    async fn send(&mut self) -> Result<(), WorkloadError> {
        let chunk = Bytes::from(std::mem::take(&mut self.buf).into_bytes());
        self.buf.reserve(CHUNK_BYTES + 1024);
        self.sink
            .feed(chunk)
            .await
            .map_err(|e| db_error(self.target, &self.what, &e))?;
        self.counter.fetch_add(self.rows, Ordering::Relaxed);
        self.rows = 0;
        Ok(())
    }

    async fn finish(mut self) -> Result<u64, WorkloadError> {
        self.send().await?;
        self.sink
            .as_mut()
            .finish()
            .await
            .map_err(|e| db_error(self.target, &self.what, &e))
    }

    /// Appends one field and its separator.
    fn field(&mut self, v: impl std::fmt::Display) {
        use std::fmt::Write as _;
        let _ = write!(self.buf, "{v}\t");
    }

    fn null(&mut self) {
        self.buf.push_str("\\N\t");
    }

    fn sep(&mut self) {
        self.buf.push('\t');
    }
}

struct Loader<'a> {
    client: &'a Client,
    target: &'a ResolvedTarget,
    shared: &'a Shared,
    rng: &'a mut Rng,
}

impl<'a> Loader<'a> {
    async fn copy(&self, table: &str) -> Result<Copy<'a>, WorkloadError> {
        let what = format!("loading {table}");
        let sink = self
            .client
            .copy_in::<_, Bytes>(&format!("COPY {table} FROM STDIN"))
            .await
            .map_err(|e| db_error(self.target, &what, &e))?;
        Ok(Copy {
            sink: Box::pin(sink),
            buf: String::with_capacity(CHUNK_BYTES + 1024),
            rows: 0,
            counter: &self.shared.counter,
            target: self.target,
            what,
        })
    }

    /// ITEM: 100,000 rows (clause 4.3.3.1).
    async fn items(&mut self) -> Result<u64, WorkloadError> {
        let mut c = self.copy("item").await?;
        for i_id in 1..=ITEMS {
            c.field(i_id);
            c.field(self.rng.gen_range(1..=10_000));
            push_astring(&mut c.buf, self.rng, 14, 24);
            c.sep();
            push_decimal(&mut c.buf, self.rng, 100, 10_000, 2);
            c.sep();
            push_data(&mut c.buf, self.rng);
            c.sep();
            c.end_row().await?;
        }
        c.finish().await
    }

    /// Name, street 1 and 2, city, state, zip: the address of warehouses, districts and
    /// customers (clause 4.3.3.1). Returns the state's first character (CH's nation key).
    fn address(&mut self, c: &mut Copy<'_>, name: Option<(usize, usize)>) -> u8 {
        if let Some((lo, hi)) = name {
            push_astring(&mut c.buf, self.rng, lo, hi);
            c.sep();
        }
        for _ in 0..3 {
            push_astring(&mut c.buf, self.rng, 10, 20);
            c.sep();
        }
        let state = c.buf.len();
        push_astring(&mut c.buf, self.rng, 2, 2);
        let first = c.buf.as_bytes().get(state).copied().unwrap_or(b'A');
        c.sep();
        push_zip(&mut c.buf, self.rng);
        c.sep();
        first
    }

    /// Every row belonging to warehouse `w`.
    async fn warehouse(&mut self, w: i64) -> Result<u64, WorkloadError> {
        let mut rows = 0;
        let mut c = self.copy("warehouse").await?;
        c.field(w);
        let _ = self.address(&mut c, Some((6, 10)));
        push_decimal(&mut c.buf, self.rng, 0, 2000, 4);
        c.sep();
        c.field("300000.00");
        c.end_row().await?;
        rows += c.finish().await?;

        let mut c = self.copy("district").await?;
        for d in 1..=DISTRICTS {
            c.field(d);
            c.field(w);
            let _ = self.address(&mut c, Some((6, 10)));
            push_decimal(&mut c.buf, self.rng, 0, 2000, 4);
            c.sep();
            c.field("30000.00");
            c.field(ORDERS_PER_DISTRICT + 1);
            c.end_row().await?;
        }
        rows += c.finish().await?;
        // The orders before the stock and the customers, whose counts and balances (in a
        // CH load) are theirs.
        let mut counts = vec![(0u32, 0u32); ITEMS as usize + 1];
        let mut delivered = vec![0i64; (DISTRICTS * CUSTOMERS_PER_DISTRICT) as usize];
        rows += self.orders(w, &mut counts, &mut delivered).await?;
        rows += self.customers(w, &delivered).await?;
        rows += self.stock(w, &counts).await?;
        Ok(rows)
    }

    /// STOCK, with S_ORDER_CNT and S_YTD of the order lines `counts` (lines, quantity; zero
    /// in TPC-C's rows, whose loaded orders count nowhere).
    async fn stock(&mut self, w: i64, counts: &[(u32, u32)]) -> Result<u64, WorkloadError> {
        let ch = self.shared.flavor == Flavor::Ch;
        let mut c = self.copy("stock").await?;
        for i in 1..=ITEMS {
            c.field(i);
            c.field(w);
            c.field(self.rng.gen_range(10..=100));
            for _ in 0..10 {
                push_astring(&mut c.buf, self.rng, 24, 24);
                c.sep();
            }
            let (lines, quantity) = counts.get(i as usize).copied().unwrap_or((0, 0));
            c.field(quantity);
            c.field(lines);
            c.field(0);
            push_data(&mut c.buf, self.rng);
            c.sep();
            if ch {
                c.field(w * i % CH_SUPPLIERS);
            }
            c.end_row().await?;
        }
        c.finish().await
    }

    /// CUSTOMER and HISTORY (one history row per customer). A CH customer's C_BALANCE is
    /// what Delivery would have left: the amounts of their `delivered` lines (cents, by
    /// district and customer) less the 10.00 of their loaded payment, so clause 3.3.2.10's
    /// condition holds; TPC-C's is -10.00, its delivered lines carrying 0.
    async fn customers(&mut self, w: i64, delivered: &[i64]) -> Result<u64, WorkloadError> {
        let now = self.shared.now.clone();
        let ch = self.shared.flavor == Flavor::Ch;
        let mut c = self.copy("customer").await?;
        for d in 1..=DISTRICTS {
            for id in 1..=CUSTOMERS_PER_DISTRICT {
                c.field(id);
                c.field(d);
                c.field(w);
                push_astring(&mut c.buf, self.rng, 8, 16);
                c.buf.push_str("\tOE\t");
                // Clause 4.3.3.1: the first 1,000 customers take every name once, the rest
                // NURand(255, 0, 999) with the load's C.
                let num = if id <= 1000 {
                    id - 1
                } else {
                    nurand(self.rng, 255, 0, 999, self.shared.c_load)
                };
                push_last_name(&mut c.buf, num);
                c.sep();
                let state = self.address(&mut c, None);
                push_nstring(&mut c.buf, self.rng, 16, 16);
                c.sep();
                c.field(&now);
                c.field(if self.rng.gen_range(0..10) == 0 {
                    "BC"
                } else {
                    "GC"
                });
                c.field("50000.00");
                push_decimal(&mut c.buf, self.rng, 0, 5000, 4);
                c.sep();
                let owed = if ch {
                    delivered.get(customer_index(d, id)).copied().unwrap_or(0)
                } else {
                    0
                };
                push_cents(&mut c.buf, owed - 1000);
                c.buf.push_str("\t10.00\t1\t0\t");
                push_astring(&mut c.buf, self.rng, 300, 500);
                c.sep();
                if ch {
                    // C_N_NATIONKEY: the ASCII code of C_STATE's first character.
                    c.field(state);
                }
                c.end_row().await?;
            }
        }
        let mut rows = c.finish().await?;

        let mut c = self.copy("history").await?;
        for d in 1..=DISTRICTS {
            for id in 1..=CUSTOMERS_PER_DISTRICT {
                c.field(id);
                c.field(d);
                c.field(w);
                c.field(d);
                c.field(w);
                c.field(&now);
                c.field("10.00");
                push_astring(&mut c.buf, self.rng, 12, 24);
                c.sep();
                c.end_row().await?;
            }
        }
        rows += c.finish().await?;
        Ok(rows)
    }

    /// ORDER (customers in a random permutation), NEW-ORDER (the last 900 per district) and
    /// ORDER-LINE (5-15 per order; delivered orders have a date and amount 0); each line's
    /// item's lines and quantity counted into `counts` (read by STOCK in a CH load), and each
    /// delivered line's amount into its customer's `delivered` (read by CUSTOMER in a CH load).
    async fn orders(
        &mut self,
        w: i64,
        counts: &mut [(u32, u32)],
        delivered: &mut [i64],
    ) -> Result<u64, WorkloadError> {
        let now = self.shared.now.clone();
        let ch = self.shared.flavor == Flavor::Ch;
        let mut line_counts: Vec<i64> =
            Vec::with_capacity((DISTRICTS * ORDERS_PER_DISTRICT) as usize);
        let mut owners: Vec<i64> = Vec::with_capacity(line_counts.capacity());
        let mut customers: Vec<i64> = (1..=CUSTOMERS_PER_DISTRICT).collect();
        let mut c = self.copy("orders").await?;
        for d in 1..=DISTRICTS {
            customers.shuffle(self.rng);
            for o in 1..=ORDERS_PER_DISTRICT {
                let lines = self.rng.gen_range(5..=15);
                line_counts.push(lines);
                let owner = customers[(o - 1) as usize];
                owners.push(owner);
                c.field(o);
                c.field(d);
                c.field(w);
                c.field(owner);
                if ch && o < FIRST_NEW_ORDER {
                    c.field(entered(self.shared.now_epoch, FIRST_NEW_ORDER - o));
                } else {
                    c.field(&now);
                }
                if o < FIRST_NEW_ORDER {
                    c.field(self.rng.gen_range(1..=10));
                } else {
                    c.null();
                }
                c.field(lines);
                c.field(1);
                c.end_row().await?;
            }
        }
        let mut rows = c.finish().await?;

        let mut c = self.copy("new_order").await?;
        for d in 1..=DISTRICTS {
            for o in FIRST_NEW_ORDER..=ORDERS_PER_DISTRICT {
                c.field(o);
                c.field(d);
                c.field(w);
                c.end_row().await?;
            }
        }
        rows += c.finish().await?;

        let mut c = self.copy("order_line").await?;
        let mut lines = line_counts.iter().zip(&owners);
        for d in 1..=DISTRICTS {
            for o in 1..=ORDERS_PER_DISTRICT {
                let (n, owner) = lines.next().map_or((5, 0), |(n, c)| (*n, *c));
                for number in 1..=n {
                    c.field(o);
                    c.field(d);
                    c.field(w);
                    c.field(number);
                    let item = if ch {
                        nurand(self.rng, 8191, 1, ITEMS, OL_I_ID_RUN)
                    } else {
                        self.rng.gen_range(1..=ITEMS)
                    };
                    c.field(item);
                    c.field(w);
                    if o < FIRST_NEW_ORDER {
                        c.field(&now);
                    } else {
                        c.null();
                    }
                    // A CH line has New-Order's quantity (clause 2.4.1.5) and an amount
                    // whether delivered or not; TPC-C's are 5, and 0 once delivered.
                    let quantity: u32 = if ch { self.rng.gen_range(1..=10) } else { 5 };
                    if let Some(n) = counts.get_mut(item as usize).filter(|_| ch) {
                        *n = (n.0 + 1, n.1 + quantity);
                    }
                    c.field(quantity);
                    if o < FIRST_NEW_ORDER && !ch {
                        c.field("0.00");
                    } else {
                        let cents = self.rng.gen_range(1..=999_999);
                        if o < FIRST_NEW_ORDER {
                            if let Some(owed) = delivered.get_mut(customer_index(d, owner)) {
                                *owed += cents;
                            }
                        }
                        push_cents(&mut c.buf, cents);
                        c.sep();
                    }
                    push_astring(&mut c.buf, self.rng, 24, 24);
                    c.sep();
                    c.end_row().await?;
                }
            }
        }
        rows += c.finish().await?;
        Ok(rows)
    }
}

/// A customer's place in a warehouse's per-customer list (district `d`, customer `c`).
fn customer_index(d: i64, c: i64) -> usize {
    usize::try_from((d - 1) * CUSTOMERS_PER_DISTRICT + (c - 1)).unwrap_or(usize::MAX)
}

/// Appends `cents` as a decimal of two places, signed.
fn push_cents(out: &mut String, cents: i64) {
    use std::fmt::Write as _;
    let sign = if cents < 0 { "-" } else { "" };
    let _ = write!(out, "{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100);
}

/// O_ENTRY_D of a delivered order in a CH load: `hours` hours before the load's instant
/// `now_epoch`, as SQL text.
fn entered(now_epoch: i64, hours: i64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp(now_epoch - hours * 3600)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let (d, t) = (at.date(), at.time());
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        d.year(),
        u8::from(d.month()),
        d.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ch_order_is_entered_whole_hours_before_the_load() {
        // 2026-11-28 14:00:00 read as UTC.
        let now = 1_795_874_400;
        assert_eq!(entered(now, 0), "2026-11-28 14:00:00");
        assert_eq!(entered(now, 15), "2026-11-27 23:00:00");
        assert_eq!(entered(now, 2100), "2026-09-02 02:00:00");
    }

    #[test]
    fn balances_are_written_as_signed_decimals() {
        let text = |cents| {
            let mut s = String::new();
            push_cents(&mut s, cents);
            s
        };
        assert_eq!(text(-1000), "-10.00");
        assert_eq!(text(-5), "-0.05");
        assert_eq!(text(123_456), "1234.56");
        assert_eq!(customer_index(1, 1), 0);
        assert_eq!(customer_index(2, 3), 3002);
    }
}
