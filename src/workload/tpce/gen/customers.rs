//! The customers unit of a load: for each of a load unit's 1,000 customers its CUSTOMER and
//! ADDRESS rows, its accounts (CUSTOMER_ACCOUNT) and the people permitted to trade them
//! (ACCOUNT_PERMISSION), its two tax rates (CUSTOMER_TAXRATE), and its watch list (WATCH_LIST,
//! WATCH_ITEM). Sizes per tpce.md §2.1: 1,000 customers, ~5 accounts each, ~1.42 permissions
//! per account, 2 tax rates, one list of 50–150 symbols.
//!
//! What the driver recomputes (tiers, names, tax ids, accounts, brokers, permitted people) comes
//! from [`crate::workload::tpce::customer`], so the rows here and the run's inputs agree; the
//! rest of a customer comes from [`super::customers_profile`]. [`watch_list_securities`] is how
//! Market-Watch learns a customer's list without reading it.

use std::ops::RangeInclusive;

use super::catalog::{taxrate, zip_code, ACTV, TAXRATES};
use super::customers_profile::{access_string, account_balance, account_name, Profile, COUNTRIES};
use super::{ids, Batch, Table, BATCH_BYTES};
use crate::workload::tpce::customer::{
    account_broker, account_tax_status, customer_taxrates, permitted, Customer,
};
use crate::workload::tpce::names::{symbol, Gender};
use crate::workload::tpce::rng::{Entity, Tag};
use crate::workload::tpce::scale::{watch_items, Scale};

/// Field of the [`Tag::WatchList`] stream (keyed by C_ID) where the draws of the list's
/// securities start; field 0 is the list's length ([`watch_items`]).
const F_WATCH_FIRST: u32 = 1;

/// Load unit `lu`'s customer rows, in batches of about [`BATCH_BYTES`] (one load unit's are
/// about 1.7 MB, so usually one batch).
pub fn batches(seed: u64, scale: &Scale, lu: u64) -> Box<dyn Iterator<Item = Batch> + Send> {
    Box::new(CustomerBatches::new(seed, *scale, lu, BATCH_BYTES))
}

/// The security indexes (from 1, ascending, distinct) on customer `c_id`'s watch list:
/// [`watch_items`] of them, uniform over all of the database's securities.
pub fn watch_list_securities(seed: u64, scale: &Scale, c_id: u64) -> Vec<u64> {
    let total = scale.securities();
    let n = watch_items(seed, c_id).min(total);
    let e = Entity::new(seed, Tag::WatchList, c_id);
    // Floyd's sampling: exactly n draws, each a new element, so a list costs no retries and
    // its fields are fixed.
    let mut chosen: Vec<u64> = Vec::with_capacity(n as usize);
    for (k, j) in (total - n + 1..=total).enumerate() {
        let t = e.range(F_WATCH_FIRST + k as u32, 1, j as i64) as u64;
        chosen.push(if chosen.contains(&t) { j } else { t });
    }
    chosen.sort_unstable();
    chosen
}

/// The batches of one unit: customers are written whole, and a batch is handed out once it
/// holds `limit` bytes.
struct CustomerBatches {
    seed: u64,
    scale: Scale,
    customers: RangeInclusive<u64>,
    limit: usize,
    /// TX_ID of every tax rate, by index.
    taxrate_ids: Vec<String>,
}

impl CustomerBatches {
    fn new(seed: u64, scale: Scale, lu: u64, limit: usize) -> CustomerBatches {
        CustomerBatches {
            seed,
            scale,
            customers: ids::customers_of(lu),
            limit,
            taxrate_ids: (0..TAXRATES).map(|i| taxrate(seed, i).0).collect(),
        }
    }

    /// All rows of customer `c_id`.
    fn write(&self, b: &mut Batch, c_id: u64) {
        let seed = self.seed;
        let c = Customer::generate(seed, c_id);
        let p = Profile::generate(seed, &c);
        let ad_id = ids::customer_address(c_id);

        let mut row = b
            .row(Table::Customer)
            .int(c_id as i64)
            .text(&c.tax_id)
            .text(ACTV)
            .text(&c.last_name)
            .text(&c.first_name)
            .text(p.middle_initial.encode_utf8(&mut [0; 4]))
            .text(match c.gender {
                Gender::Female => "F",
                Gender::Male => "M",
            })
            .int(c.tier as i64)
            .date(p.birth_date)
            .int(ad_id as i64);
        for phone in &p.phones {
            row = match phone {
                Some(ph) => row
                    .text(ph.country)
                    .text(&ph.area)
                    .text(&ph.local)
                    .opt_text(ph.extension.as_deref()),
                None => row.null().null().null().null(),
            };
        }
        row.text(&p.emails[0]).text(&p.emails[1]).end();

        b.row(Table::Address)
            .int(ad_id as i64)
            .text(&p.address_line1)
            .opt_text(p.address_line2.as_deref())
            .text(&zip_code(seed, p.zip))
            .text(COUNTRIES[p.country].0)
            .end();

        for rate in customer_taxrates(seed, c_id) {
            b.row(Table::CustomerTaxrate)
                .text(&self.taxrate_ids[rate])
                .int(c_id as i64)
                .end();
        }

        for ca_id in c.account_ids() {
            b.row(Table::CustomerAccount)
                .int(ca_id as i64)
                .int(account_broker(seed, ca_id) as i64)
                .int(c_id as i64)
                .text(&account_name(seed, ca_id, &c))
                .int(i64::from(account_tax_status(seed, ca_id)))
                .cents(account_balance(seed, ca_id))
                .end();
            for (k, person) in permitted(seed, ca_id).into_iter().enumerate() {
                let other;
                let who = if person == c_id {
                    &c
                } else {
                    other = Customer::generate(seed, person);
                    &other
                };
                b.row(Table::AccountPermission)
                    .int(ca_id as i64)
                    .text(access_string(seed, ca_id, k))
                    .text(&who.tax_id)
                    .text(&who.last_name)
                    .text(&who.first_name)
                    .end();
            }
        }

        // WL_ID = C_ID (gen::ids).
        b.row(Table::WatchList)
            .int(c_id as i64)
            .int(c_id as i64)
            .end();
        for s_id in watch_list_securities(seed, &self.scale, c_id) {
            b.row(Table::WatchItem)
                .int(c_id as i64)
                .text(&symbol(seed, s_id))
                .end();
        }
    }
}

impl Iterator for CustomerBatches {
    type Item = Batch;

    fn next(&mut self) -> Option<Batch> {
        let mut batch = Batch::new();
        while batch.bytes() < self.limit {
            let Some(c_id) = self.customers.next() else {
                break;
            };
            self.write(&mut batch, c_id);
        }
        (!batch.is_empty()).then_some(batch)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;
    use crate::workload::tpce::customer::permission_count;
    use crate::workload::tpce::gen::assert_rows_fit_schema;
    use crate::workload::tpce::scale::accounts;

    type Rows = HashMap<Table, Vec<Vec<String>>>;

    /// Every row of load unit `lu`, split into fields, per table; and the number of batches.
    fn unit_rows(seed: u64, scale: &Scale, lu: u64, limit: usize) -> (Rows, usize) {
        let mut rows = Rows::new();
        let mut count = 0;
        for batch in CustomerBatches::new(seed, *scale, lu, limit) {
            assert_rows_fit_schema(&batch);
            assert_fields_fit_widths(&batch);
            count += 1;
            for (table, text) in batch.into_tables() {
                let split = text
                    .lines()
                    .map(|l| l.split('\t').map(String::from).collect());
                rows.entry(table).or_default().extend(split);
            }
        }
        (rows, count)
    }

    /// The declared length of each varchar column of `table` in schema.sql (None otherwise).
    fn widths(table: Table) -> Vec<Option<usize>> {
        let schema = include_str!("../schema.sql");
        let create = format!("CREATE TABLE {} (", table.name());
        let body = schema
            .split_once(&create)
            .and_then(|(_, rest)| rest.split_once("\n);"))
            .map_or("", |(body, _)| body);
        body.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let (_, ty) = l.split_once("varchar(")?;
                ty.split_once(')')?.0.parse().ok()
            })
            .collect()
    }

    fn assert_fields_fit_widths(batch: &Batch) {
        for table in Table::ALL {
            let w = widths(table);
            for line in batch.text(table).lines() {
                for (field, width) in line.split('\t').zip(&w) {
                    if let Some(width) = width {
                        assert!(field.chars().count() <= *width, "{}: {line}", table.name());
                    }
                }
            }
        }
    }

    fn assert_unique<'a>(rows: &'a [Vec<String>], key: &[usize], what: &str) {
        let mut seen: HashSet<Vec<&'a str>> = HashSet::new();
        for r in rows {
            let k: Vec<&str> = key.iter().map(|&i| r[i].as_str()).collect();
            assert!(seen.insert(k.clone()), "{what}: {k:?} twice");
        }
    }

    fn int(field: &str) -> u64 {
        field.parse().unwrap()
    }

    #[test]
    fn a_unit_has_the_rows_of_its_customers() {
        let (seed, lu) = (11, 1);
        let scale = Scale::new(2_000, 1, 500).unwrap();
        let (rows, _) = unit_rows(seed, &scale, lu, BATCH_BYTES);
        let customers = ids::customers_of(lu);
        let expected_accounts: u64 = customers.clone().map(|c| accounts(seed, c)).sum();
        let expected_permissions: u64 = customers
            .clone()
            .flat_map(|c| Customer::generate(seed, c).account_ids())
            .map(|a| permission_count(seed, a))
            .sum();
        let expected_items: u64 = customers.clone().map(|c| watch_items(seed, c)).sum();
        let count = |t: Table| rows.get(&t).map_or(0, |r| r.len() as u64);
        assert_eq!(count(Table::Customer), 1_000);
        assert_eq!(count(Table::Address), 1_000);
        assert_eq!(count(Table::WatchList), 1_000);
        assert_eq!(count(Table::CustomerTaxrate), 2_000);
        assert_eq!(count(Table::CustomerAccount), expected_accounts);
        assert_eq!(count(Table::AccountPermission), expected_permissions);
        assert_eq!(count(Table::WatchItem), expected_items);
        assert_eq!(rows.len(), 7, "no other table");

        // Ids are the unit's own.
        let c_ids: Vec<u64> = rows[&Table::Customer].iter().map(|r| int(&r[0])).collect();
        assert_eq!(c_ids, customers.clone().collect::<Vec<_>>());
        for r in &rows[&Table::Customer] {
            assert_eq!(int(&r[9]), ids::customer_address(int(&r[0])));
        }
        let ad_ids: Vec<u64> = rows[&Table::Address].iter().map(|r| int(&r[0])).collect();
        assert_eq!(
            ad_ids,
            customers
                .clone()
                .map(ids::customer_address)
                .collect::<Vec<_>>()
        );
        for r in &rows[&Table::CustomerAccount] {
            let b = int(&r[1]);
            assert!(ids::brokers_of(lu).contains(&b), "{r:?}");
            assert!(customers.contains(&int(&r[2])));
        }

        let mut per_list: HashMap<u64, u64> = HashMap::new();
        for r in &rows[&Table::WatchItem] {
            *per_list.entry(int(&r[0])).or_default() += 1;
        }
        assert_eq!(per_list.len(), 1_000);
        for (c_id, n) in per_list {
            assert!((50..=150).contains(&n), "{c_id}: {n}");
            assert_eq!(n, watch_items(seed, c_id));
        }
    }

    #[test]
    fn tiers_split_200_600_200_and_keys_are_unique() {
        let scale = Scale::new(1_000, 1, 500).unwrap();
        let (rows, _) = unit_rows(4, &scale, 0, BATCH_BYTES);
        let mut tiers = [0; 3];
        for r in &rows[&Table::Customer] {
            tiers[int(&r[7]) as usize - 1] += 1;
            assert_eq!(r[2], "ACTV");
            assert!(r[6] == "M" || r[6] == "F", "{r:?}");
        }
        assert_eq!(tiers, [200, 600, 200]);
        assert_unique(&rows[&Table::Customer], &[0], "c_id");
        assert_unique(&rows[&Table::Customer], &[1], "c_tax_id");
        assert_unique(&rows[&Table::Address], &[0], "ad_id");
        assert_unique(&rows[&Table::CustomerAccount], &[0], "ca_id");
        assert_unique(
            &rows[&Table::AccountPermission],
            &[0, 2],
            "ap_ca_id, ap_tax_id",
        );
        assert_unique(&rows[&Table::CustomerTaxrate], &[1, 0], "cx_c_id, cx_tx_id");
        assert_unique(&rows[&Table::WatchList], &[0], "wl_id");
        assert_unique(&rows[&Table::WatchItem], &[0, 1], "wi_wl_id, wi_s_symb");
        // Line 2 is NULL in about 60 % of addresses.
        let nulls = rows[&Table::Address]
            .iter()
            .filter(|r| r[2] == "\\N")
            .count();
        assert!((540..=660).contains(&nulls), "{nulls}");
        // Balances positive in about 80 % of accounts.
        let accounts = &rows[&Table::CustomerAccount];
        let positive = accounts
            .iter()
            .filter(|r| !r[5].starts_with('-') && r[5] != "0.00");
        let share = positive.count() as f64 / accounts.len() as f64;
        assert!((0.77..=0.83).contains(&share), "{share}");
    }

    #[test]
    fn permissions_name_the_permitted_people() {
        let seed = 6;
        let scale = Scale::new(1_000, 1, 500).unwrap();
        let (rows, _) = unit_rows(seed, &scale, 0, BATCH_BYTES);
        let mut by_account: HashMap<u64, Vec<&Vec<String>>> = HashMap::new();
        for r in &rows[&Table::AccountPermission] {
            by_account.entry(int(&r[0])).or_default().push(r);
        }
        let mut others = 0;
        for (ca_id, got) in by_account {
            let people = permitted(seed, ca_id);
            assert_eq!(got.len(), people.len());
            for (k, (r, person)) in got.iter().zip(&people).enumerate() {
                let p = Customer::generate(seed, *person);
                assert_eq!(
                    [&r[2], &r[3], &r[4]],
                    [&p.tax_id, &p.last_name, &p.first_name]
                );
                assert_eq!(r[1] == "0000", k == 0, "{r:?}");
                assert_eq!(r[1].len(), 4);
                others += usize::from(k > 0);
            }
        }
        assert!(others > 0);
        // The two tax rates are a country and a division rate.
        for pair in rows[&Table::CustomerTaxrate].chunks(2) {
            assert!(
                pair[0][0].starts_with('C') && pair[1][0].starts_with('D'),
                "{pair:?}"
            );
        }
    }

    #[test]
    fn watch_lists_are_distinct_securities_of_the_whole_database() {
        let scale = Scale::new(3_000, 1, 500).unwrap();
        let mut beyond_first_unit = false;
        for c_id in 1..=300 {
            let list = watch_list_securities(2, &scale, c_id);
            assert_eq!(list.len() as u64, watch_items(2, c_id));
            assert!(
                list.windows(2).all(|w| w[0] < w[1]),
                "ascending and distinct"
            );
            assert!(list.iter().all(|s| (1..=scale.securities()).contains(s)));
            beyond_first_unit |= list.iter().any(|&s| s > 685);
            assert_eq!(list, watch_list_securities(2, &scale, c_id));
        }
        assert!(beyond_first_unit);
        // Uniform over the securities: each third of the range gets about a third.
        let mut thirds = [0u64; 3];
        for c_id in 1..=2_000 {
            for s in watch_list_securities(2, &scale, c_id) {
                thirds[((s - 1) * 3 / scale.securities()) as usize] += 1;
            }
        }
        let total: u64 = thirds.iter().sum();
        for t in thirds {
            assert!(
                (t as f64 / total as f64 - 1.0 / 3.0).abs() < 0.01,
                "{thirds:?}"
            );
        }
        // The WATCH_ITEM rows are these lists' symbols.
        let small = Scale::new(1_000, 1, 500).unwrap();
        let (rows, _) = unit_rows(2, &small, 0, BATCH_BYTES);
        let first: Vec<String> = rows[&Table::WatchItem]
            .iter()
            .filter(|r| r[0] == "1")
            .map(|r| r[1].clone())
            .collect();
        let want: Vec<String> = watch_list_securities(2, &small, 1)
            .into_iter()
            .map(|s| symbol(2, s))
            .collect();
        assert_eq!(first, want);
    }

    #[test]
    fn batches_are_cut_by_size_and_deterministic() {
        let scale = Scale::new(1_000, 1, 500).unwrap();
        let whole: Vec<Batch> = batches(9, &scale, 0).collect();
        assert_eq!(whole.len(), 1, "one unit fits one batch");
        let again: Vec<Batch> = batches(9, &scale, 0).collect();
        let other_seed: Vec<Batch> = batches(10, &scale, 0).collect();
        let limit = 100_000;
        let pieces: Vec<Batch> = CustomerBatches::new(9, scale, 0, limit).collect();
        assert!(pieces.len() > 10, "{}", pieces.len());
        // A batch ends with the customer that crossed the limit; one customer's rows are a
        // few kB, far below the limit.
        for b in &pieces[..pieces.len() - 1] {
            assert!(
                (limit..limit + 20_000).contains(&b.bytes()),
                "{}",
                b.bytes()
            );
        }
        for table in Table::ALL {
            let joined: String = pieces.iter().map(|b| b.text(table)).collect();
            assert_eq!(joined, whole[0].text(table), "{}", table.name());
            assert_eq!(again[0].text(table), whole[0].text(table));
        }
        assert_ne!(
            other_seed[0].text(Table::Customer),
            whole[0].text(Table::Customer)
        );
    }
}
