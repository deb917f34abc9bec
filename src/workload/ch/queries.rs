//! CH-benCHmark's 22 analytic queries (Cole et al., DBTest 2011, as the TU Munich project
//! page gives them), adapted from TPC-H's to TPC-C's schema with the three added tables.
//!
//! They take no substitution parameters: every stream runs the same 22 texts (in TPC-H's
//! Appendix A order for its stream number, so streams do not run in lockstep). What differs
//! from the published texts, and why:
//!
//! - **Dates.** The published constants (2007-01-02 to 2020-01-02) were written for data
//!   entered around the start of 2011. TPC-C's loader stamps rows with the load's own date, so
//!   each constant moves by the whole days from 2011-01-01 to the load's date ([`shift`],
//!   kept in `ch_meta`): the ranges cover the loaded rows and the years after them, as they
//!   did for CH's authors, and the executed texts show the dates they used.
//! - **Joins** through the stored columns S_SU_SUPPKEY and C_N_NATIONKEY (see
//!   [`super::tables`]) where the published texts compute them, except in Q20's subquery,
//!   whose grouping needs the expression.
//! - **Q22** asks for customers who have not ordered in the 30 days before the load
//!   (`o_entry_d` after 2010-12-02, moved as the other dates), where the published text asks
//!   for customers who never ordered: TPC-C's load gives every customer an order (clause
//!   4.3.3.1), so that text is empty by construction on TPC-C's data. TPC-H's Q22, which it
//!   adapts, speaks of customers who have not ordered for some years.
//! - Q15's view is the published `with` (one statement, so streams never collide).
//! - Names as stored: `orders`, `order_line`, `new_order`.

use time::{Date, Duration, Month};

/// The date CH-benCHmark's constants assume the data was loaded on.
pub const REFERENCE: (i32, Month, u8) = (2011, Month::January, 1);

/// The queries, Q1 first. Each timestamp literal is moved by the load's shift.
pub const TEXTS: [&str; 22] = [
    // Q1
    "select ol_number, sum(ol_quantity) as sum_qty, sum(ol_amount) as sum_amount, \
     avg(ol_quantity) as avg_qty, avg(ol_amount) as avg_amount, count(*) as count_order \
     from order_line where ol_delivery_d > '2007-01-02 00:00:00' \
     group by ol_number order by ol_number",
    // Q2
    "select su_suppkey, su_name, n_name, i_id, i_name, su_address, su_phone, su_comment \
     from item, supplier, stock, nation, region, \
     (select s_i_id as m_i_id, min(s_quantity) as m_s_quantity \
      from stock, supplier, nation, region \
      where s_su_suppkey = su_suppkey and su_nationkey = n_nationkey \
        and n_regionkey = r_regionkey and r_name like 'Europ%' group by s_i_id) m \
     where i_id = s_i_id and s_su_suppkey = su_suppkey and su_nationkey = n_nationkey \
       and n_regionkey = r_regionkey and i_data like '%b' and r_name like 'Europ%' \
       and i_id = m_i_id and s_quantity = m_s_quantity \
     order by n_name, su_name, i_id",
    // Q3
    "select ol_o_id, ol_w_id, ol_d_id, sum(ol_amount) as revenue, o_entry_d \
     from customer, new_order, orders, order_line \
     where c_state like 'A%' and c_id = o_c_id and c_w_id = o_w_id and c_d_id = o_d_id \
       and no_w_id = o_w_id and no_d_id = o_d_id and no_o_id = o_id \
       and ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id \
       and o_entry_d > '2007-01-02 00:00:00' \
     group by ol_o_id, ol_w_id, ol_d_id, o_entry_d order by revenue desc, o_entry_d",
    // Q4
    "select o_ol_cnt, count(*) as order_count from orders \
     where o_entry_d >= '2007-01-02 00:00:00' and o_entry_d < '2012-01-02 00:00:00' \
       and exists (select * from order_line where o_id = ol_o_id and o_w_id = ol_w_id \
                   and o_d_id = ol_d_id and ol_delivery_d >= o_entry_d) \
     group by o_ol_cnt order by o_ol_cnt",
    // Q5
    "select n_name, sum(ol_amount) as revenue \
     from customer, orders, order_line, stock, supplier, nation, region \
     where c_id = o_c_id and c_w_id = o_w_id and c_d_id = o_d_id \
       and ol_o_id = o_id and ol_w_id = o_w_id and ol_d_id = o_d_id \
       and ol_w_id = s_w_id and ol_i_id = s_i_id and s_su_suppkey = su_suppkey \
       and c_n_nationkey = su_nationkey and su_nationkey = n_nationkey \
       and n_regionkey = r_regionkey and r_name = 'Europe' \
       and o_entry_d >= '2007-01-02 00:00:00' \
     group by n_name order by revenue desc",
    // Q6
    "select sum(ol_amount) as revenue from order_line \
     where ol_delivery_d >= '1999-01-01 00:00:00' and ol_delivery_d < '2020-01-01 00:00:00' \
       and ol_quantity between 1 and 100000",
    // Q7
    "select su_nationkey as supp_nation, substr(c_state, 1, 1) as cust_nation, \
       extract(year from o_entry_d) as l_year, sum(ol_amount) as revenue \
     from supplier, stock, order_line, orders, customer, nation n1, nation n2 \
     where ol_supply_w_id = s_w_id and ol_i_id = s_i_id and s_su_suppkey = su_suppkey \
       and ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id \
       and c_id = o_c_id and c_w_id = o_w_id and c_d_id = o_d_id \
       and su_nationkey = n1.n_nationkey and c_n_nationkey = n2.n_nationkey \
       and ((n1.n_name = 'Germany' and n2.n_name = 'Cambodia') \
         or (n1.n_name = 'Cambodia' and n2.n_name = 'Germany')) \
       and ol_delivery_d between '2007-01-02 00:00:00' and '2012-01-02 00:00:00' \
     group by su_nationkey, substr(c_state, 1, 1), extract(year from o_entry_d) \
     order by su_nationkey, cust_nation, l_year",
    // Q8
    "select extract(year from o_entry_d) as l_year, \
       sum(case when n2.n_name = 'Germany' then ol_amount else 0 end) / sum(ol_amount) \
         as mkt_share \
     from item, supplier, stock, order_line, orders, customer, nation n1, nation n2, region \
     where i_id = s_i_id and ol_i_id = s_i_id and ol_supply_w_id = s_w_id \
       and s_su_suppkey = su_suppkey and ol_w_id = o_w_id and ol_d_id = o_d_id \
       and ol_o_id = o_id and c_id = o_c_id and c_w_id = o_w_id and c_d_id = o_d_id \
       and n1.n_nationkey = c_n_nationkey and n1.n_regionkey = r_regionkey \
       and ol_i_id < 1000 and r_name = 'Europe' and su_nationkey = n2.n_nationkey \
       and o_entry_d between '2007-01-02 00:00:00' and '2012-01-02 00:00:00' \
       and i_data like '%b' and i_id = ol_i_id \
     group by extract(year from o_entry_d) order by l_year",
    // Q9
    "select n_name, extract(year from o_entry_d) as l_year, sum(ol_amount) as sum_profit \
     from item, stock, supplier, order_line, orders, nation \
     where ol_i_id = s_i_id and ol_supply_w_id = s_w_id and s_su_suppkey = su_suppkey \
       and ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id and ol_i_id = i_id \
       and su_nationkey = n_nationkey and i_data like '%BB' \
     group by n_name, extract(year from o_entry_d) order by n_name, l_year desc",
    // Q10
    "select c_id, c_last, sum(ol_amount) as revenue, c_city, c_phone, n_name \
     from customer, orders, order_line, nation \
     where c_id = o_c_id and c_w_id = o_w_id and c_d_id = o_d_id \
       and ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id \
       and o_entry_d >= '2007-01-02 00:00:00' and o_entry_d <= ol_delivery_d \
       and n_nationkey = c_n_nationkey \
     group by c_id, c_last, c_city, c_phone, n_name order by revenue desc",
    // Q11
    "select s_i_id, sum(s_order_cnt) as ordercount from stock, supplier, nation \
     where s_su_suppkey = su_suppkey and su_nationkey = n_nationkey and n_name = 'Germany' \
     group by s_i_id \
     having sum(s_order_cnt) > (select sum(s_order_cnt) * .005 \
       from stock, supplier, nation \
       where s_su_suppkey = su_suppkey and su_nationkey = n_nationkey \
         and n_name = 'Germany') \
     order by ordercount desc",
    // Q12
    "select o_ol_cnt, \
       sum(case when o_carrier_id = 1 or o_carrier_id = 2 then 1 else 0 end) \
         as high_line_count, \
       sum(case when o_carrier_id <> 1 and o_carrier_id <> 2 then 1 else 0 end) \
         as low_line_count \
     from orders, order_line \
     where ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id \
       and o_entry_d <= ol_delivery_d and ol_delivery_d < '2020-01-01 00:00:00' \
     group by o_ol_cnt order by o_ol_cnt",
    // Q13
    "select c_count, count(*) as custdist \
     from (select c_id, count(o_id) as c_count \
           from customer left outer join orders on (c_w_id = o_w_id and c_d_id = o_d_id \
             and c_id = o_c_id and o_carrier_id > 8) \
           group by c_id) as c_orders \
     group by c_count order by custdist desc, c_count desc",
    // Q14
    "select 100.00 * sum(case when i_data like 'PR%' then ol_amount else 0 end) \
       / (1 + sum(ol_amount)) as promo_revenue \
     from order_line, item \
     where ol_i_id = i_id and ol_delivery_d >= '2007-01-02 00:00:00' \
       and ol_delivery_d < '2020-01-02 00:00:00'",
    // Q15
    "with revenue (supplier_no, total_revenue) as ( \
       select s_su_suppkey, sum(ol_amount) from order_line, stock \
       where ol_i_id = s_i_id and ol_supply_w_id = s_w_id \
         and ol_delivery_d >= '2007-01-02 00:00:00' \
       group by s_su_suppkey) \
     select su_suppkey, su_name, su_address, su_phone, total_revenue \
     from supplier, revenue \
     where su_suppkey = supplier_no \
       and total_revenue = (select max(total_revenue) from revenue) \
     order by su_suppkey",
    // Q16
    "select i_name, substr(i_data, 1, 3) as brand, i_price, \
       count(distinct s_su_suppkey) as supplier_cnt \
     from stock, item \
     where i_id = s_i_id and i_data not like 'zz%' \
       and s_su_suppkey not in (select su_suppkey from supplier \
                                where su_comment like '%bad%') \
     group by i_name, substr(i_data, 1, 3), i_price order by supplier_cnt desc",
    // Q17
    "select sum(ol_amount) / 2.0 as avg_yearly \
     from order_line, (select i_id, avg(ol_quantity) as a from item, order_line \
                       where i_data like '%b' and ol_i_id = i_id group by i_id) t \
     where ol_i_id = t.i_id and ol_quantity < t.a",
    // Q18
    "select c_last, c_id, o_id, o_entry_d, o_ol_cnt, sum(ol_amount) as amount_sum \
     from customer, orders, order_line \
     where c_id = o_c_id and c_w_id = o_w_id and c_d_id = o_d_id \
       and ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id \
     group by o_id, o_w_id, o_d_id, c_id, c_last, o_entry_d, o_ol_cnt \
     having sum(ol_amount) > 200 order by amount_sum desc, o_entry_d",
    // Q19
    "select sum(ol_amount) as revenue from order_line, item \
     where (ol_i_id = i_id and i_data like '%a' and ol_quantity >= 1 and ol_quantity <= 10 \
            and i_price between 1 and 400000 and ol_w_id in (1, 2, 3)) \
        or (ol_i_id = i_id and i_data like '%b' and ol_quantity >= 1 and ol_quantity <= 10 \
            and i_price between 1 and 400000 and ol_w_id in (1, 2, 4)) \
        or (ol_i_id = i_id and i_data like '%c' and ol_quantity >= 1 and ol_quantity <= 10 \
            and i_price between 1 and 400000 and ol_w_id in (1, 5, 3))",
    // Q20
    "select su_name, su_address from supplier, nation \
     where su_suppkey in (select mod(s_i_id * s_w_id, 10000) from stock, order_line \
         where s_i_id in (select i_id from item where i_data like 'co%') \
           and ol_i_id = s_i_id and ol_delivery_d > '2010-05-23 12:00:00' \
         group by s_i_id, s_w_id, s_quantity having 2 * s_quantity > sum(ol_quantity)) \
       and su_nationkey = n_nationkey and n_name = 'Germany' \
     order by su_name",
    // Q21
    "select su_name, count(*) as numwait \
     from supplier, order_line l1, orders, stock, nation \
     where ol_o_id = o_id and ol_w_id = o_w_id and ol_d_id = o_d_id \
       and ol_w_id = s_w_id and ol_i_id = s_i_id and s_su_suppkey = su_suppkey \
       and l1.ol_delivery_d > o_entry_d \
       and not exists (select * from order_line l2 \
                       where l2.ol_o_id = l1.ol_o_id and l2.ol_w_id = l1.ol_w_id \
                         and l2.ol_d_id = l1.ol_d_id \
                         and l2.ol_delivery_d > l1.ol_delivery_d) \
       and su_nationkey = n_nationkey and n_name = 'Germany' \
     group by su_name order by numwait desc, su_name",
    // Q22
    "select substr(c_state, 1, 1) as country, count(*) as numcust, \
       sum(c_balance) as totacctbal \
     from customer \
     where substr(c_phone, 1, 1) in ('1', '2', '3', '4', '5', '6', '7') \
       and c_balance > (select avg(c_balance) from customer where c_balance > 0.00 \
                        and substr(c_phone, 1, 1) in ('1', '2', '3', '4', '5', '6', '7')) \
       and not exists (select * from orders \
                       where o_c_id = c_id and o_w_id = c_w_id and o_d_id = c_d_id \
                         and o_entry_d > '2010-12-02 00:00:00') \
     group by substr(c_state, 1, 1) order by substr(c_state, 1, 1)",
];

/// The whole days from [`REFERENCE`] to `loaded` (a load's date as `YYYY-MM-DD`), by which
/// every date of the queries moves; `None` for text that is not such a date.
pub fn shift(loaded: &str) -> Option<i64> {
    let (y, m, d) = REFERENCE;
    let reference = Date::from_calendar_date(y, m, d).ok()?;
    Some((parse_date(loaded)? - reference).whole_days())
}

fn parse_date(text: &str) -> Option<Date> {
    let mut parts = text.get(..10)?.split('-');
    let year: i32 = parts.next()?.parse().ok()?;
    let month: u8 = parts.next()?.parse().ok()?;
    let day: u8 = parts.next()?.parse().ok()?;
    Date::from_calendar_date(year, Month::try_from(month).ok()?, day).ok()
}

/// Query `number` (1 to 22) with its dates moved by `days`.
pub fn render(number: u8, days: i64) -> Option<String> {
    let text = TEXTS.get(usize::from(number).checked_sub(1)?)?;
    let mut out = String::with_capacity(text.len());
    let mut rest = *text;
    // Each literal is a quote, `YYYY-MM-DD`, then its time of day: only the date moves.
    while let Some(at) = rest.find('\'') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        if let Some(date) = parse_date(rest).filter(|_| rest.as_bytes().get(10) == Some(&b' ')) {
            let moved = date.checked_add(Duration::days(days))?;
            out.push_str(&format!(
                "{:04}-{:02}-{:02}",
                moved.year(),
                u8::from(moved.month()),
                moved.day()
            ));
            rest = &rest[10..];
        }
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_move_by_the_days_from_the_reference_to_the_load() {
        assert_eq!(shift("2011-01-01"), Some(0));
        assert_eq!(shift("2011-01-31 10:00:00"), Some(30));
        assert_eq!(shift("not a date"), None);
        let days = shift("2026-11-28").unwrap();
        let q4 = render(4, days).unwrap();
        // 2026-11-28 − 2011-01-01 is 5810 days: 2007-01-02 → 2022-11-29, 2012-01-02 →
        // 2027-11-29.
        assert_eq!(days, 5810);
        assert!(q4.contains("o_entry_d >= '2022-11-29 00:00:00'"), "{q4}");
        assert!(q4.contains("o_entry_d < '2027-11-29 00:00:00'"), "{q4}");
        // Q20's bound falls before the load's date; the upper bounds after it.
        assert!(render(20, days)
            .unwrap()
            .contains("> '2026-04-19 12:00:00'"));
        // Q22's window: the 30 days before the load.
        assert!(render(22, days)
            .unwrap()
            .contains("o_entry_d > '2026-10-29 00:00:00'"));
        // Strings that are not dates stay as written.
        assert!(render(2, days).unwrap().contains("like 'Europ%'"));
        assert_eq!(render(1, 0).unwrap(), TEXTS[0]);
    }

    #[test]
    fn there_are_22_queries_and_no_23rd() {
        assert!(render(22, 0).is_some());
        assert!(render(23, 0).is_none() && render(0, 0).is_none());
        for q in 1..=22u8 {
            let text = render(q, 5000).unwrap();
            assert!(
                text.starts_with("select") || text.starts_with("with"),
                "Q{q}"
            );
            assert!(!text.contains("  "), "Q{q} keeps no runs of blanks: {text}");
        }
    }
}
