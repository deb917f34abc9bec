//! The update sets against the specification's own definition (issue 51), checked from the
//! rows as RF1 sends them, with the rules restated here rather than taken from the code under
//! test: clause 2.5 (each set is SF × 1,500 orders, RF1's with 1 to 7 lineitems each),
//! clause 4.2.3 (the sparse order keys in 1 to SF × 6,000,000; each column's range; the
//! lineitems' dates after their order's; the status, flag and total derived from the lines;
//! the part's price and its four suppliers; CURRENTDATE 1995-06-17).

use time::{Date, Month};

use super::refresh::UpdateSets;
use super::rows::ScaleFactor;

/// Clause 4.2.3's dates, as Julian day numbers.
fn day(y: i32, m: u8, d: u8) -> i32 {
    let month = Month::try_from(m).unwrap_or(Month::January);
    Date::from_calendar_date(y, month, d).map_or(0, |d| d.to_julian_day())
}

fn parse_day(text: &str) -> i32 {
    let mut it = text.split('-').map(|p| p.parse::<i32>().unwrap_or(0));
    let (y, m, d) = (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    );
    day(y, m as u8, d as u8)
}

/// The values of one SQL tuple `(a,'b',…)`, quotes removed (`''` is one quote).
fn values(tuple: &str) -> Vec<String> {
    let inner = tuple.trim().trim_start_matches('(').trim_end_matches(')');
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if quoted && chars.peek() == Some(&'\'') => {
                chars.next();
                if let Some(v) = out.last_mut() {
                    v.push('\'');
                }
            }
            '\'' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => {
                if let Some(v) = out.last_mut() {
                    v.push(c);
                }
            }
        }
    }
    out
}

fn cents(text: &str) -> i64 {
    (text.parse::<f64>().unwrap_or(-1.0) * 100.0).round() as i64
}

#[test]
fn each_set_holds_sf_times_1500_orders_in_the_sparse_key_space() {
    for sf in [0.01, 0.1, 1.0, 10.0] {
        let sets = UpdateSets::new(ScaleFactor::new(sf).unwrap());
        let n = (sf * 1500.0).round() as usize;
        let max_key = (sf * 6_000_000.0).round() as i64;
        for pair in [1, 2, sets.max_pairs() / 3, sets.max_pairs()] {
            let ins = sets.insert_keys(pair).unwrap();
            let del = sets.delete_keys(pair).unwrap();
            assert_eq!((ins.len(), del.len()), (n, n), "SF {sf} pair {pair}");
            // The base data holds the first 8 keys of every 32; new ones fill the other 24. The
            // sparse rule gives order SF × 1,500,000 the range's last key, the first of a block
            // whose gaps lie past the range: the last set of each gap reaches up to 24 keys
            // past SF × 6,000,000 (a deviation from clause 4.2.3's range, by one block).
            let last_of_gap = pair % (sets.max_pairs() / 3) == 0;
            let bound = max_key + if last_of_gap { 24 } else { 0 };
            assert!(ins.iter().all(|k| (1..=bound).contains(k) && k % 32 >= 8));
            // Delete sets take base orders for the first third of the pairs, then what the
            // insert sets a third before put in.
            let from_base = pair <= sets.max_pairs() / 3;
            assert!(del
                .iter()
                .all(|k| (1..=bound).contains(k) && (k % 32 < 8) == from_base));
            assert!(del.windows(2).all(|w| w[0] < w[1]));
        }
        // The first third of the pairs delete base orders, in key order, set after set; the
        // base order of index i (from 1) has DBGEN's key (i div 8) × 32 + i mod 8.
        let base = |i: i64| i / 8 * 32 + i % 8;
        let third = i64::from(sets.max_pairs() / 3);
        let del = sets.delete_keys(third as u32).unwrap();
        assert_eq!(del[0], base((third - 1) * n as i64 + 1), "SF {sf}");
        assert_eq!(del[n - 1], base(third * n as i64), "SF {sf}");
    }
}

#[test]
fn new_orders_and_lines_follow_clause_4_2_3() {
    let sf = 0.01;
    let sets = UpdateSets::new(ScaleFactor::new(sf).unwrap());
    let (customers, parts, suppliers) = (1500, 2000, 100);
    let current = day(1995, 6, 17);
    let (first, last) = (day(1992, 1, 1), day(1998, 12, 31) - 151);
    let mut lines_seen = 0;
    for pair in [1, 2, 500, 3000] {
        for o in sets.new_sales(pair, 11).unwrap() {
            let v = values(&o.order);
            assert_eq!(v.len(), 9, "{}", o.order);
            assert_eq!(v[0], o.key.to_string());
            let cust: i64 = v[1].parse().unwrap();
            assert!((1..=customers).contains(&cust) && cust % 3 != 0, "{cust}");
            let ordered = parse_day(&v[4]);
            assert!((first..=last).contains(&ordered), "{}", v[4]);
            assert!(v[6].starts_with("Clerk#") && v[6].len() == 15, "{}", v[6]);
            let clerk: i64 = v[6][6..].parse().unwrap();
            assert!((1..=1000).contains(&clerk));
            assert_eq!(v[7], "0");
            assert!((1..=7).contains(&o.lines.len()));
            let (mut total, mut shipped) = (0.0, 0);
            for (i, line) in o.lines.iter().enumerate() {
                let l = values(line);
                assert_eq!(l.len(), 16, "{line}");
                assert_eq!(
                    (l[0].as_str(), l[3].clone()),
                    (v[0].as_str(), (i + 1).to_string())
                );
                let part: i64 = l[1].parse().unwrap();
                let supp: i64 = l[2].parse().unwrap();
                assert!((1..=parts).contains(&part));
                // Clause 4.2.3: the part's four suppliers.
                let s = suppliers;
                let four: Vec<i64> = (0..4)
                    .map(|i| (part + i * (s / 4 + (part - 1) / s)) % s + 1)
                    .collect();
                assert!(four.contains(&supp), "part {part} supplier {supp}");
                let quantity: i64 = l[4].parse().unwrap();
                assert!((1..=50).contains(&quantity));
                let price = 90_000 + (part / 10) % 20_001 + 100 * (part % 1000);
                assert_eq!(cents(&l[5]), quantity * price);
                let (discount, tax) = (cents(&l[6]), cents(&l[7]));
                assert!((0..=10).contains(&discount) && (0..=8).contains(&tax));
                let (ship, commit, receipt) =
                    (parse_day(&l[10]), parse_day(&l[11]), parse_day(&l[12]));
                assert!((1..=121).contains(&(ship - ordered)));
                assert!((30..=90).contains(&(commit - ordered)));
                assert!((1..=30).contains(&(receipt - ship)));
                let flag_ok = if receipt <= current {
                    l[8] == "R" || l[8] == "A"
                } else {
                    l[8] == "N"
                };
                assert!(flag_ok, "{line}");
                assert_eq!(l[9], if ship > current { "O" } else { "F" });
                shipped += usize::from(l[9] == "F");
                let extended = cents(&l[5]) as f64 / 100.0;
                total += extended * (1.0 - discount as f64 / 100.0) * (1.0 + tax as f64 / 100.0);
                lines_seen += 1;
            }
            let status = match shipped {
                s if s == o.lines.len() => "F",
                0 => "O",
                _ => "P",
            };
            assert_eq!(v[2], status);
            // The total is the lines' charges: DBGEN's integer cents truncate each charge
            // twice (after the discount, after the tax), so each is up to 2 cents under the
            // exact product, never over.
            let got = cents(&v[3]) as f64 / 100.0;
            assert!(
                got <= total + 1e-6 && total - got <= 0.02 * o.lines.len() as f64,
                "{got} vs {total}"
            );
        }
    }
    assert!(lines_seen > 4 * 15);
}
