//! The retail data of the Greenplum study (its `order_lineitems`), generated: every row
//! a pure function of the seed and its line-item id, so any number of COPY streams load the
//! same bytes, and `check` can count what each partition must hold without reading a file.
//!
//! Five years of orders, 2007-01-01 to 2011-12-31, four line items each; order `o` of `n` falls
//! at `START + (o - 1) * SPAN / n`, so time grows with the id and each partition of the fact
//! table (monthly for the first four years, weekly for the last, as in the study) is one range
//! of ids, which a stream copies straight into that partition. A customer is drawn per order,
//! a product (of 100, in 10 categories) and a quantity (1 to 10) per line item.

use crate::workload::splitmix as mix;

/// 2007-01-01T00:00:00Z and 2012-01-01T00:00:00Z: the five years the data spans.
pub const START: i64 = 1_167_609_600;
pub const END: i64 = 1_325_376_000;
const SPAN: i64 = END - START;
pub const ITEMS_PER_ORDER: u64 = 4;
pub const PRODUCTS: u64 = 100;
pub const CATEGORIES: [&str; 10] = [
    "Books",
    "Music",
    "Movies",
    "Electronics",
    "Computers",
    "Home",
    "Garden",
    "Toys",
    "Sports",
    "Clothing",
];

/// The size of a load: its line items and the customers they are drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub rows: u64,
    pub customers: u64,
    pub seed: u64,
}

impl Size {
    /// `rows` line items; a customer for every 40 (at least 100).
    pub fn new(rows: u64, seed: u64) -> Size {
        Size {
            rows,
            customers: (rows / 40).max(100),
            seed,
        }
    }

    fn orders(&self) -> u64 {
        self.rows.div_ceil(ITEMS_PER_ORDER).max(1)
    }

    /// When order `order` (from 1) was placed, in seconds since the epoch.
    pub fn order_time(&self, order: u64) -> i64 {
        START + ((order - 1) as i128 * SPAN as i128 / self.orders() as i128) as i64
    }

    /// The first line-item id (from 0) placed at or after `t`.
    pub fn first_id_at(&self, t: i64) -> u64 {
        let d = (t - START).clamp(0, SPAN) as i128;
        let orders = self.orders() as i128;
        // The first order o with floor((o - 1) * SPAN / n) >= d.
        let before = (d * orders + SPAN as i128 - 1) / SPAN as i128;
        (before as u64 * ITEMS_PER_ORDER).min(self.rows)
    }
}

/// One line item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub id: u64,
    pub order_id: u64,
    pub customer_id: u64,
    pub product_id: u64,
    pub category_id: u64,
    pub order_time: i64,
    pub quantity: u64,
    pub price_cents: u64,
}

/// Line item `id` (from 0) of a load of `size`.
pub fn line(size: &Size, id: u64) -> Line {
    let order = id / ITEMS_PER_ORDER + 1;
    let product = mix(size.seed ^ 0x5bd1_e995, id) % PRODUCTS + 1;
    Line {
        id: id + 1,
        order_id: order,
        customer_id: mix(size.seed, order) % size.customers + 1,
        product_id: product,
        category_id: category_of(product),
        order_time: size.order_time(order),
        quantity: mix(size.seed ^ 0x27d4_eb2f, id) % 10 + 1,
        price_cents: price_of(product),
    }
}

pub fn category_of(product: u64) -> u64 {
    (product - 1) % CATEGORIES.len() as u64 + 1
}

pub fn price_of(product: u64) -> u64 {
    199 + product * 7_919 % 9_800
}

/// Appends line items `from..to` in COPY's text format, in the fact table's column order.
pub fn copy_rows(size: &Size, from: u64, to: u64, out: &mut String) {
    copy_rows_split(size, from, to, &|_| 0, std::slice::from_mut(out));
}

/// As [`copy_rows`], each line into `outs[route(customer_id)]`: the segment it belongs on.
pub fn copy_rows_split(
    size: &Size,
    from: u64,
    to: u64,
    route: &dyn Fn(u64) -> usize,
    outs: &mut [String],
) {
    // The load's hot loop: numbers through itoa, an order's time formatted once for its line
    // items, nothing allocated per row (`format!` here cost the loader a fifth of its rate).
    let mut n = itoa::Buffer::new();
    let mut stamp = (i64::MIN, String::new());
    for id in from..to {
        let l = line(size, id);
        if stamp.0 != l.order_time {
            stamp = (l.order_time, timestamp(l.order_time));
        }
        let out = &mut outs[route(l.customer_id)];
        for v in [l.id, l.order_id, l.customer_id, l.product_id, l.category_id] {
            out.push_str(n.format(v));
            out.push('\t');
        }
        out.push_str(CATEGORIES[(l.category_id - 1) as usize]);
        out.push('\t');
        out.push_str(&stamp.1);
        out.push('\t');
        out.push_str(n.format(l.quantity));
        out.push('\t');
        push_cents(out, l.price_cents, &mut n);
        out.push('\t');
        push_cents(out, l.price_cents * l.quantity, &mut n);
        out.push('\n');
    }
}

/// Rows sampled per pass of [`rows_for_bytes`].
const SAMPLE: u64 = 5_000;

/// The line items whose COPY text comes to about `bytes` (`--size 10GB`). A row's length
/// grows with the load (longer ids), so the mean is read off rows spread over the load a
/// first guess gives, and the guess corrected; two passes land within a fraction of a percent.
pub fn rows_for_bytes(bytes: u64, seed: u64) -> u64 {
    let mut rows = (bytes / 64).max(1);
    let mut text = String::new();
    for _ in 0..2 {
        let size = Size::new(rows, seed);
        let step = (rows / SAMPLE).max(1);
        text.clear();
        let sampled = (0..rows).step_by(step as usize).fold(0u64, |n, id| {
            copy_rows(&size, id, id + 1, &mut text);
            n + 1
        });
        let mean = text.len() as f64 / sampled as f64;
        rows = ((bytes as f64 / mean).round() as u64).max(1);
    }
    rows
}

/// `cents` as `units.cc`.
fn push_cents(out: &mut String, cents: u64, n: &mut itoa::Buffer) {
    out.push_str(n.format(cents / 100));
    out.push('.');
    let c = cents % 100;
    if c < 10 {
        out.push('0');
    }
    out.push_str(n.format(c));
}

/// The customers of segment `k` (from 0) of `n`: `[lo, hi)`, equal ranges of customer ids.
pub fn customer_range(size: &Size, k: u64, n: u64) -> (u64, u64) {
    (k * size.customers / n + 1, (k + 1) * size.customers / n + 1)
}

/// The segment (from 0) of `n` customer `c` belongs on: the one whose [`customer_range`]
/// holds it (a first guess, corrected for the ranges' rounding).
pub fn segment_of(size: &Size, c: u64, n: u64) -> usize {
    let lo = |k: u64| k * size.customers / n + 1;
    let mut k = ((c - 1) * n / size.customers).min(n - 1);
    while k + 1 < n && lo(k + 1) <= c {
        k += 1;
    }
    while k > 0 && lo(k) > c {
        k -= 1;
    }
    k as usize
}

/// Line items per segment of `n`, counted from the generator (a customer per order).
pub fn rows_per_segment(size: &Size, n: u64) -> Vec<u64> {
    let mut out = vec![0; n as usize];
    for id in 0..size.rows {
        out[segment_of(size, line(size, id).customer_id, n)] += 1;
    }
    out
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of epoch seconds.
pub fn timestamp(t: i64) -> String {
    let (y, m, d) = civil(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Days since 1970-01-01 as a (year, month, day) of the proleptic Gregorian calendar.
fn civil(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Epoch seconds of the first instant of (year, month, day), UTC.
pub fn epoch_of(y: i64, m: u32, d: u32) -> i64 {
    // Howard Hinnant's days-from-civil algorithm.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) * 86_400
}

/// One partition of the fact table: its name and the times it holds, `[from, to)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    pub from: i64,
    pub to: i64,
}

/// Monthly partitions for 2007 to 2010, weekly for 2011 (the last one ends with the year).
pub fn partitions() -> Vec<Partition> {
    let mut out = Vec::new();
    for y in 2007..2011 {
        for m in 1..=12u32 {
            let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
            out.push(Partition {
                name: format!("order_lineitems_{y}_{m:02}"),
                from: epoch_of(y, m, 1),
                to: epoch_of(ny, nm, 1),
            });
        }
    }
    let mut from = epoch_of(2011, 1, 1);
    let mut week = 1;
    while from < END {
        let to = (from + 7 * 86_400).min(END);
        out.push(Partition {
            name: format!("order_lineitems_2011_w{week:02}"),
            from,
            to,
        });
        from = to;
        week += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trips() {
        assert_eq!(epoch_of(2007, 1, 1), START);
        assert_eq!(epoch_of(2012, 1, 1), END);
        assert_eq!(timestamp(START), "2007-01-01 00:00:00");
        assert_eq!(
            timestamp(epoch_of(2008, 2, 29) + 3_661),
            "2008-02-29 01:01:01"
        );
        assert_eq!(timestamp(END - 1), "2011-12-31 23:59:59");
    }

    #[test]
    fn a_size_in_bytes_gives_rows_of_about_that_much_text() {
        for bytes in [50_000u64, 3_000_000] {
            let rows = rows_for_bytes(bytes, 7);
            let mut text = String::new();
            copy_rows(&Size::new(rows, 7), 0, rows, &mut text);
            let off = (text.len() as f64 / bytes as f64 - 1.0).abs();
            assert!(off < 0.01, "{bytes} B asked, {} B made", text.len());
        }
    }

    #[test]
    fn partitions_tile_the_span_monthly_then_weekly() {
        let p = partitions();
        assert_eq!(p.len(), 48 + 53);
        assert_eq!(p[0].from, START);
        assert_eq!(p.last().unwrap().to, END);
        assert!(p.windows(2).all(|w| w[0].to == w[1].from));
        assert_eq!(p[47].name, "order_lineitems_2010_12");
        assert_eq!(p[48].name, "order_lineitems_2011_w01");
    }

    #[test]
    fn each_partition_is_the_id_range_of_its_times() {
        let size = Size::new(10_001, 3);
        let p = partitions();
        for part in &p {
            let (lo, hi) = (size.first_id_at(part.from), size.first_id_at(part.to));
            for id in lo..hi {
                let t = line(&size, id).order_time;
                assert!(part.from <= t && t < part.to, "{} id {id}", part.name);
            }
        }
        assert_eq!(size.first_id_at(START), 0);
        assert_eq!(size.first_id_at(END), size.rows);
    }

    #[test]
    fn segments_split_the_customers_evenly_and_route_to_their_range() {
        let size = Size::new(8_000, 4);
        let n = 3;
        for c in 1..=size.customers {
            let k = segment_of(&size, c, n) as u64;
            let (lo, hi) = customer_range(&size, k, n);
            assert!(
                lo <= c && c < hi,
                "customer {c} in segment {k} [{lo}, {hi})"
            );
        }
        assert_eq!(customer_range(&size, 0, n).0, 1);
        assert_eq!(customer_range(&size, n - 1, n).1, size.customers + 1);
        let per = rows_per_segment(&size, n);
        assert_eq!(per.iter().sum::<u64>(), size.rows);
        assert!(per.iter().all(|r| *r > size.rows / 5), "{per:?}");
    }

    #[test]
    fn copy_text_holds_every_column_as_postgres_reads_it() {
        let size = Size::new(1_000, 5);
        let mut text = String::new();
        copy_rows(&size, 0, 40, &mut text);
        for (id, got) in text.lines().enumerate() {
            let l = line(&size, id as u64);
            let cents = |c: u64| format!("{}.{:02}", c / 100, c % 100);
            let want = format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                l.id,
                l.order_id,
                l.customer_id,
                l.product_id,
                l.category_id,
                CATEGORIES[(l.category_id - 1) as usize],
                timestamp(l.order_time),
                l.quantity,
                cents(l.price_cents),
                cents(l.price_cents * l.quantity)
            );
            assert_eq!(got, want);
        }
    }

    #[test]
    fn rows_are_pure_functions_of_seed_and_id() {
        let a = Size::new(1_000, 9);
        let mut one = String::new();
        copy_rows(&a, 0, 1_000, &mut one);
        let mut halves = String::new();
        copy_rows(&a, 0, 400, &mut halves);
        copy_rows(&a, 400, 1_000, &mut halves);
        assert_eq!(one, halves);
        let l = line(&a, 7);
        assert_eq!(l.order_id, 2);
        assert!((1..=10).contains(&l.quantity) && l.customer_id <= a.customers);
        assert_ne!(line(&Size::new(1_000, 10), 7), l);
    }
}
