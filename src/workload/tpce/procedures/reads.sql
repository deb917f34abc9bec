-- The read transactions of `tpce` and Trade-Update as PL/pgSQL functions, called by
-- `tidebench run --procedures` (src/workload/tpce/txn/*.rs, each module's CALL statements).
-- `tidebench prepare --workload tpce` installs them with CREATE OR REPLACE, so installing again
-- is harmless.
--
-- Each function runs its client-side statement word for word (the modules' unit tests check
-- it), with the parameters as positional `$n`, so both back ends return the same rows: one
-- frame is one statement either way. The caller still opens the transaction at the
-- transaction's isolation level (read committed for the reads, repeatable read for
-- Trade-Update) and commits it; a function cannot choose its isolation level.
--
-- Table names are unqualified: they resolve through the caller's search_path. Output columns
-- are OUT parameters of the same names as table columns; `#variable_conflict use_column` makes
-- the statements read the columns.

-- Broker-Volume (broker_volume.rs): $1 broker names, $2 sector name.
CREATE OR REPLACE FUNCTION tpce_broker_volume(text[], text)
RETURNS TABLE (
    b_name varchar, volume numeric
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT b.b_name, sum(tr.tr_qty * tr.tr_bid_price) AS volume FROM broker b JOIN trade_request
    tr ON tr.tr_b_id = b.b_id JOIN security s ON s.s_symb = tr.tr_s_symb JOIN company co ON
    co.co_id = s.s_co_id JOIN industry i ON i.in_id = co.co_in_id JOIN sector sc ON sc.sc_id =
    i.in_sc_id WHERE b.b_name = ANY($1::text[]) AND sc.sc_name = $2::text GROUP BY b.b_name ORDER
    BY volume DESC, b.b_name;
END
$$;

-- Customer-Position (customer_position.rs): $1 C_ID or $2 tax id, $3 the history account's index
-- (null: no history).
CREATE OR REPLACE FUNCTION tpce_customer_position(bigint, text, integer)
RETURNS TABLE (
    c_id bigint, c_st_id varchar, c_l_name varchar, c_f_name varchar, c_m_name varchar,
    c_gndr varchar, c_tier smallint, c_dob date, c_ad_id bigint, c_ctry_1 varchar,
    c_area_1 varchar, c_local_1 varchar, c_ext_1 varchar, c_ctry_2 varchar, c_area_2 varchar,
    c_local_2 varchar, c_ext_2 varchar, c_ctry_3 varchar, c_area_3 varchar, c_local_3 varchar,
    c_ext_3 varchar, c_email_1 varchar, c_email_2 varchar, accounts bigint, account_list json,
    history bigint, history_list json
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH c AS (SELECT c_id, c_st_id, c_l_name, c_f_name, c_m_name, c_gndr, c_tier, c_dob,
    c_ad_id, c_ctry_1, c_area_1, c_local_1, c_ext_1, c_ctry_2, c_area_2, c_local_2, c_ext_2,
    c_ctry_3, c_area_3, c_local_3, c_ext_3, c_email_1, c_email_2 FROM customer WHERE c_id =
    $1::bigint OR c_tax_id = $2::text), a AS (SELECT ca.ca_id, ca.ca_bal, coalesce(sum(hs.hs_qty
    * lt.lt_price), 0) AS assets FROM customer_account ca LEFT JOIN holding_summary hs ON
    hs.hs_ca_id = ca.ca_id LEFT JOIN last_trade lt ON lt.lt_s_symb = hs.hs_s_symb WHERE
    ca.ca_c_id = (SELECT c_id FROM c) GROUP BY ca.ca_id, ca.ca_bal ORDER BY assets, ca.ca_id
    LIMIT 10), t AS (SELECT t_id, t_s_symb, t_qty FROM trade WHERE $3::int IS NOT NULL AND
    t_ca_id = (SELECT ca_id FROM a ORDER BY assets, ca_id OFFSET $3::int LIMIT 1) ORDER BY t_dts
    DESC, t_id DESC LIMIT 10), h AS (SELECT t.t_id, t.t_s_symb, t.t_qty, st.st_name, th.th_dts
    FROM t JOIN trade_history th ON th.th_t_id = t.t_id JOIN status_type st ON st.st_id =
    th.th_st_id ORDER BY th.th_dts DESC, t.t_id DESC LIMIT 30) SELECT c.c_id, c.c_st_id,
    c.c_l_name, c.c_f_name, c.c_m_name, c.c_gndr, c.c_tier, c.c_dob, c.c_ad_id, c.c_ctry_1,
    c.c_area_1, c.c_local_1, c.c_ext_1, c.c_ctry_2, c.c_area_2, c.c_local_2, c.c_ext_2,
    c.c_ctry_3, c.c_area_3, c.c_local_3, c.c_ext_3, c.c_email_1, c.c_email_2, (SELECT count(*)
    FROM a) AS accounts, (SELECT json_agg(a ORDER BY a.assets, a.ca_id) FROM a) AS account_list,
    (SELECT count(*) FROM h) AS history, (SELECT json_agg(h ORDER BY h.th_dts DESC, h.t_id DESC)
    FROM h) AS history_list FROM c;
END
$$;

-- Market-Watch (market_watch.rs): $1 watch list owner, $2 account or $3 industry with companies
-- $4..$5 (the others null); $6 the start day.
CREATE OR REPLACE FUNCTION tpce_market_watch(bigint, bigint, text, bigint, bigint, date)
RETURNS TABLE (
    priced bigint, pct_change numeric
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH list AS (SELECT wi.wi_s_symb AS symb FROM watch_list wl JOIN watch_item wi ON
    wi.wi_wl_id = wl.wl_id WHERE wl.wl_c_id = $1::bigint UNION ALL SELECT hs.hs_s_symb FROM
    holding_summary hs WHERE hs.hs_ca_id = $2::bigint UNION ALL SELECT s.s_symb FROM industry i
    JOIN company co ON co.co_in_id = i.in_id JOIN security s ON s.s_co_id = co.co_id WHERE
    i.in_name = $3::text AND co.co_id BETWEEN $4::bigint AND $5::bigint) SELECT count(*) AS
    priced, coalesce(round(100 * (sum(s.s_num_out * lt.lt_price) / nullif(sum(s.s_num_out *
    dm.dm_close), 0) - 1), 4), 0) AS pct_change FROM list JOIN security s ON s.s_symb = list.symb
    JOIN last_trade lt ON lt.lt_s_symb = list.symb JOIN daily_market dm ON dm.dm_s_symb =
    list.symb AND dm.dm_date = $6::date;
END
$$;

-- Security-Detail (security_detail.rs): $1 symbol, $2 start day, $3 daily rows, $4 read the news body.
CREATE OR REPLACE FUNCTION tpce_security_detail(text, date, integer, boolean)
RETURNS TABLE (
    s_name varchar, co_id bigint, co_name varchar, co_sp_rate varchar, co_ceo varchar,
    co_desc varchar, co_open_date date, co_st_id varchar, co_ad_line1 varchar,
    co_ad_line2 varchar, co_ad_town varchar, co_ad_div varchar, co_ad_zip varchar,
    co_ad_ctry varchar, s_num_out bigint, s_start_date date, s_exch_date date, s_pe numeric,
    s_52wk_high numeric, s_52wk_high_date date, s_52wk_low numeric, s_52wk_low_date date,
    s_dividend numeric, s_yield numeric, ex_name varchar, ex_desc varchar, ex_open smallint,
    ex_close smallint, ex_num_symb integer, ex_ad_line1 varchar, ex_ad_line2 varchar,
    ex_ad_town varchar, ex_ad_div varchar, ex_ad_zip varchar, ex_ad_ctry varchar,
    lt_price numeric, lt_open_price numeric, lt_vol bigint, competitors json, financials bigint,
    financial_list json, days bigint, day_list json, news bigint, news_list json
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT s.s_name, co.co_id, co.co_name, co.co_sp_rate, co.co_ceo, co.co_desc, co.co_open_date,
    co.co_st_id, ca.ad_line1 AS co_ad_line1, ca.ad_line2 AS co_ad_line2, zca.zc_town AS
    co_ad_town, zca.zc_div AS co_ad_div, ca.ad_zc_code AS co_ad_zip, ca.ad_ctry AS co_ad_ctry,
    s.s_num_out, s.s_start_date, s.s_exch_date, s.s_pe, s.s_52wk_high, s.s_52wk_high_date,
    s.s_52wk_low, s.s_52wk_low_date, s.s_dividend, s.s_yield, ex.ex_name, ex.ex_desc, ex.ex_open,
    ex.ex_close, ex.ex_num_symb, ea.ad_line1 AS ex_ad_line1, ea.ad_line2 AS ex_ad_line2,
    zea.zc_town AS ex_ad_town, zea.zc_div AS ex_ad_div, ea.ad_zc_code AS ex_ad_zip, ea.ad_ctry AS
    ex_ad_ctry, lt.lt_price, lt.lt_open_price, lt.lt_vol, cp.list AS competitors, fi.n AS
    financials, fi.list AS financial_list, dm.n AS days, dm.list AS day_list, ni.n AS news,
    ni.list AS news_list FROM security s JOIN company co ON co.co_id = s.s_co_id JOIN address ca
    ON ca.ad_id = co.co_ad_id JOIN zip_code zca ON zca.zc_code = ca.ad_zc_code JOIN exchange ex
    ON ex.ex_id = s.s_ex_id JOIN address ea ON ea.ad_id = ex.ex_ad_id JOIN zip_code zea ON
    zea.zc_code = ea.ad_zc_code LEFT JOIN last_trade lt ON lt.lt_s_symb = s.s_symb CROSS JOIN
    LATERAL (SELECT json_agg(x ORDER BY x.cp_comp_co_id) AS list FROM (SELECT cp.cp_comp_co_id,
    c2.co_name, i.in_name FROM company_competitor cp JOIN company c2 ON c2.co_id =
    cp.cp_comp_co_id JOIN industry i ON i.in_id = cp.cp_in_id WHERE cp.cp_co_id = co.co_id ORDER
    BY cp.cp_comp_co_id LIMIT 3) x) cp CROSS JOIN LATERAL (SELECT count(*) AS n, json_agg(x ORDER
    BY x.fi_year, x.fi_qtr) AS list FROM (SELECT fi_year, fi_qtr, fi_qtr_start_date, fi_revenue,
    fi_net_earn, fi_basic_eps, fi_dilut_eps, fi_margin, fi_inventory, fi_assets, fi_liability,
    fi_out_basic, fi_out_dilut FROM financial WHERE fi_co_id = co.co_id ORDER BY fi_year, fi_qtr
    LIMIT 20) x) fi CROSS JOIN LATERAL (SELECT count(*) AS n, json_agg(x ORDER BY x.dm_date) AS
    list FROM (SELECT dm_date, dm_close, dm_high, dm_low, dm_vol FROM daily_market WHERE
    dm_s_symb = s.s_symb AND dm_date >= $2::date ORDER BY dm_date LIMIT $3::int) x) dm CROSS JOIN
    LATERAL (SELECT count(*) AS n, json_agg(x ORDER BY x.ni_id) AS list FROM (SELECT ni.ni_id,
    ni.ni_dts, ni.ni_source, ni.ni_author, CASE WHEN $4::boolean THEN ni.ni_item ELSE '' END AS
    ni_item, CASE WHEN $4::boolean THEN '' ELSE ni.ni_headline END AS ni_headline, CASE WHEN
    $4::boolean THEN '' ELSE ni.ni_summary END AS ni_summary FROM news_xref nx JOIN news_item ni
    ON ni.ni_id = nx.nx_ni_id WHERE nx.nx_co_id = co.co_id ORDER BY ni.ni_id LIMIT 2) x) ni WHERE
    s.s_symb = $1::text;
END
$$;

-- Trade-Status (trade_status.rs): $1 the account.
CREATE OR REPLACE FUNCTION tpce_trade_status(bigint)
RETURNS TABLE (
    c_l_name varchar, c_f_name varchar, b_name varchar, t_id bigint, t_dts timestamp,
    st_name varchar, tt_name varchar, t_s_symb varchar, t_qty integer, t_exec_name varchar,
    t_chrg numeric, s_name varchar, ex_name varchar
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.c_l_name, c.c_f_name, b.b_name, t.t_id, t.t_dts, st.st_name, tt.tt_name, t.t_s_symb,
    t.t_qty, t.t_exec_name, t.t_chrg, s.s_name, ex.ex_name FROM customer_account ca JOIN customer
    c ON c.c_id = ca.ca_c_id JOIN broker b ON b.b_id = ca.ca_b_id LEFT JOIN LATERAL (SELECT t_id,
    t_dts, t_st_id, t_tt_id, t_s_symb, t_qty, t_exec_name, t_chrg FROM trade WHERE t_ca_id =
    ca.ca_id ORDER BY t_dts DESC, t_id DESC LIMIT 50) t ON true LEFT JOIN status_type st ON
    st.st_id = t.t_st_id LEFT JOIN trade_type tt ON tt.tt_id = t.t_tt_id LEFT JOIN security s ON
    s.s_symb = t.t_s_symb LEFT JOIN exchange ex ON ex.ex_id = s.s_ex_id WHERE ca.ca_id =
    $1::bigint ORDER BY t.t_dts DESC, t.t_id DESC;
END
$$;

-- Trade-Lookup frame 1 (trade_lookup.rs): $1 trade ids.
CREATE OR REPLACE FUNCTION tpce_trade_lookup_1(bigint[])
RETURNS TABLE (
    t_id bigint, t_ca_id bigint, t_tt_id varchar, tt_is_mrkt boolean, t_is_cash boolean,
    t_exec_name varchar, t_bid_price numeric, t_trade_price numeric, t_qty integer,
    t_dts timestamp, se_amt numeric, se_cash_due_date date, se_cash_type varchar, ct_amt numeric,
    ct_dts timestamp, ct_name varchar, th_dts timestamp[], th_st_ids varchar[]
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH l AS (SELECT x.id AS t_id, x.ord FROM unnest($1::bigint[]) WITH ORDINALITY AS x(id,
    ord)) SELECT t.t_id, t.t_ca_id, t.t_tt_id, tt.tt_is_mrkt, t.t_is_cash, t.t_exec_name AS
    t_exec_name, t.t_bid_price, t.t_trade_price, t.t_qty, t.t_dts, se.se_amt,
    se.se_cash_due_date, se.se_cash_type AS se_cash_type, ct.ct_amt, ct.ct_dts, ct.ct_name AS
    ct_name, h.th_dts, h.th_st_ids FROM l JOIN trade t ON t.t_id = l.t_id JOIN trade_type tt ON
    tt.tt_id = t.t_tt_id LEFT JOIN settlement se ON se.se_t_id = t.t_id LEFT JOIN
    cash_transaction ct ON t.t_is_cash AND ct.ct_t_id = t.t_id CROSS JOIN LATERAL (SELECT
    array_agg(x.th_dts ORDER BY x.th_dts) AS th_dts, array_agg(x.th_st_id ORDER BY x.th_dts) AS
    th_st_ids FROM (SELECT th_dts, th_st_id FROM trade_history WHERE th_t_id = t.t_id ORDER BY
    th_dts LIMIT 3) x) h ORDER BY l.ord;
END
$$;

-- Trade-Lookup frame 2: $1 account, $2..$3 window.
CREATE OR REPLACE FUNCTION tpce_trade_lookup_2(bigint, timestamp, timestamp)
RETURNS TABLE (
    t_id bigint, t_ca_id bigint, t_tt_id varchar, tt_is_mrkt boolean, t_is_cash boolean,
    t_exec_name varchar, t_bid_price numeric, t_trade_price numeric, t_qty integer,
    t_dts timestamp, se_amt numeric, se_cash_due_date date, se_cash_type varchar, ct_amt numeric,
    ct_dts timestamp, ct_name varchar, th_dts timestamp[], th_st_ids varchar[]
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH l AS (SELECT x.t_id, row_number() OVER (ORDER BY x.t_dts, x.t_id) AS ord FROM (SELECT
    t_id, t_dts FROM trade WHERE t_ca_id = $1::bigint AND t_dts >= $2::timestamp AND t_dts <=
    $3::timestamp ORDER BY t_dts, t_id LIMIT 20) x) SELECT t.t_id, t.t_ca_id, t.t_tt_id,
    tt.tt_is_mrkt, t.t_is_cash, t.t_exec_name AS t_exec_name, t.t_bid_price, t.t_trade_price,
    t.t_qty, t.t_dts, se.se_amt, se.se_cash_due_date, se.se_cash_type AS se_cash_type, ct.ct_amt,
    ct.ct_dts, ct.ct_name AS ct_name, h.th_dts, h.th_st_ids FROM l JOIN trade t ON t.t_id =
    l.t_id JOIN trade_type tt ON tt.tt_id = t.t_tt_id LEFT JOIN settlement se ON se.se_t_id =
    t.t_id LEFT JOIN cash_transaction ct ON t.t_is_cash AND ct.ct_t_id = t.t_id CROSS JOIN
    LATERAL (SELECT array_agg(x.th_dts ORDER BY x.th_dts) AS th_dts, array_agg(x.th_st_id ORDER
    BY x.th_dts) AS th_st_ids FROM (SELECT th_dts, th_st_id FROM trade_history WHERE th_t_id =
    t.t_id ORDER BY th_dts LIMIT 3) x) h ORDER BY l.ord;
END
$$;

-- Trade-Lookup frame 3: $1 symbol, $2..$3 window.
CREATE OR REPLACE FUNCTION tpce_trade_lookup_3(text, timestamp, timestamp)
RETURNS TABLE (
    t_id bigint, t_ca_id bigint, t_tt_id varchar, tt_is_mrkt boolean, t_is_cash boolean,
    t_exec_name varchar, t_bid_price numeric, t_trade_price numeric, t_qty integer,
    t_dts timestamp, se_amt numeric, se_cash_due_date date, se_cash_type varchar, ct_amt numeric,
    ct_dts timestamp, ct_name varchar, th_dts timestamp[], th_st_ids varchar[]
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH l AS (SELECT x.t_id, row_number() OVER (ORDER BY x.t_dts, x.t_id) AS ord FROM (SELECT
    t_id, t_dts FROM trade WHERE t_s_symb = $1::text AND t_dts >= $2::timestamp AND t_dts <=
    $3::timestamp ORDER BY t_dts, t_id LIMIT 20) x) SELECT t.t_id, t.t_ca_id, t.t_tt_id,
    tt.tt_is_mrkt, t.t_is_cash, t.t_exec_name AS t_exec_name, t.t_bid_price, t.t_trade_price,
    t.t_qty, t.t_dts, se.se_amt, se.se_cash_due_date, se.se_cash_type AS se_cash_type, ct.ct_amt,
    ct.ct_dts, ct.ct_name AS ct_name, h.th_dts, h.th_st_ids FROM l JOIN trade t ON t.t_id =
    l.t_id JOIN trade_type tt ON tt.tt_id = t.t_tt_id LEFT JOIN settlement se ON se.se_t_id =
    t.t_id LEFT JOIN cash_transaction ct ON t.t_is_cash AND ct.ct_t_id = t.t_id CROSS JOIN
    LATERAL (SELECT array_agg(x.th_dts ORDER BY x.th_dts) AS th_dts, array_agg(x.th_st_id ORDER
    BY x.th_dts) AS th_st_ids FROM (SELECT th_dts, th_st_id FROM trade_history WHERE th_t_id =
    t.t_id ORDER BY th_dts LIMIT 3) x) h ORDER BY l.ord;
END
$$;

-- Trade-Lookup frame 4: $1 account, $2 start time.
CREATE OR REPLACE FUNCTION tpce_trade_lookup_4(bigint, timestamp)
RETURNS TABLE (
    t_id bigint, hh_h_t_id bigint, hh_t_id bigint, hh_before_qty integer, hh_after_qty integer
) LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH f AS (SELECT t_id FROM trade WHERE t_ca_id = $1::bigint AND t_dts >= $2::timestamp ORDER
    BY t_dts, t_id LIMIT 1) SELECT f.t_id, hh.hh_h_t_id, hh.hh_t_id, hh.hh_before_qty,
    hh.hh_after_qty FROM f LEFT JOIN LATERAL (SELECT hh_h_t_id, hh_t_id, hh_before_qty,
    hh_after_qty FROM holding_history WHERE hh_h_t_id IN (SELECT hh_h_t_id FROM holding_history
    WHERE hh_t_id = f.t_id) ORDER BY hh_h_t_id, hh_t_id LIMIT 20) hh ON true ORDER BY
    hh.hh_h_t_id, hh.hh_t_id;
END
$$;

-- Trade-Update frame 1 (trade_update.rs): $1 trade ids; toggles T_EXEC_NAME.
CREATE OR REPLACE FUNCTION tpce_trade_update_1(bigint[])
RETURNS TABLE (
    t_id bigint, t_ca_id bigint, t_tt_id varchar, tt_is_mrkt boolean, t_is_cash boolean,
    t_exec_name varchar, t_bid_price numeric, t_trade_price numeric, t_qty integer,
    t_dts timestamp, se_amt numeric, se_cash_due_date date, se_cash_type varchar, ct_amt numeric,
    ct_dts timestamp, ct_name varchar, th_dts timestamp[], th_st_ids varchar[]
) LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH l AS (SELECT x.id AS t_id, x.ord FROM unnest($1::bigint[]) WITH ORDINALITY AS x(id,
    ord)), lk AS MATERIALIZED (SELECT t_id FROM trade WHERE t_id IN (SELECT l.t_id FROM l) ORDER
    BY t_id FOR UPDATE), u AS (UPDATE trade tu SET t_exec_name = CASE WHEN tu.t_exec_name LIKE
    '% X %' THEN replace(tu.t_exec_name, ' X ', ' ') ELSE replace(tu.t_exec_name, ' ', ' X ') END
    FROM lk WHERE tu.t_id = lk.t_id RETURNING tu.t_id, tu.t_exec_name) SELECT t.t_id, t.t_ca_id,
    t.t_tt_id, tt.tt_is_mrkt, t.t_is_cash, coalesce(u.t_exec_name, t.t_exec_name) AS t_exec_name,
    t.t_bid_price, t.t_trade_price, t.t_qty, t.t_dts, se.se_amt, se.se_cash_due_date,
    se.se_cash_type AS se_cash_type, ct.ct_amt, ct.ct_dts, ct.ct_name AS ct_name, h.th_dts,
    h.th_st_ids FROM l JOIN trade t ON t.t_id = l.t_id JOIN trade_type tt ON tt.tt_id = t.t_tt_id
    LEFT JOIN u ON u.t_id = t.t_id LEFT JOIN settlement se ON se.se_t_id = t.t_id LEFT JOIN
    cash_transaction ct ON t.t_is_cash AND ct.ct_t_id = t.t_id CROSS JOIN LATERAL (SELECT
    array_agg(x.th_dts ORDER BY x.th_dts) AS th_dts, array_agg(x.th_st_id ORDER BY x.th_dts) AS
    th_st_ids FROM (SELECT th_dts, th_st_id FROM trade_history WHERE th_t_id = t.t_id ORDER BY
    th_dts LIMIT 3) x) h ORDER BY l.ord;
END
$$;

-- Trade-Update frame 2: $1 account, $2..$3 window; toggles SE_CASH_TYPE.
CREATE OR REPLACE FUNCTION tpce_trade_update_2(bigint, timestamp, timestamp)
RETURNS TABLE (
    t_id bigint, t_ca_id bigint, t_tt_id varchar, tt_is_mrkt boolean, t_is_cash boolean,
    t_exec_name varchar, t_bid_price numeric, t_trade_price numeric, t_qty integer,
    t_dts timestamp, se_amt numeric, se_cash_due_date date, se_cash_type varchar, ct_amt numeric,
    ct_dts timestamp, ct_name varchar, th_dts timestamp[], th_st_ids varchar[]
) LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH l AS (SELECT x.t_id, row_number() OVER (ORDER BY x.t_dts, x.t_id) AS ord FROM (SELECT
    t_id, t_dts FROM trade WHERE t_ca_id = $1::bigint AND t_dts >= $2::timestamp AND t_dts <=
    $3::timestamp ORDER BY t_dts, t_id LIMIT 20) x), lk AS MATERIALIZED (SELECT se_t_id AS t_id
    FROM settlement WHERE se_t_id IN (SELECT l.t_id FROM l) ORDER BY se_t_id FOR UPDATE), u AS
    (UPDATE settlement su SET se_cash_type = CASE WHEN tc.t_is_cash THEN CASE WHEN
    su.se_cash_type = 'Cash Account' THEN 'Cash' ELSE 'Cash Account' END ELSE CASE WHEN
    su.se_cash_type = 'Margin' THEN 'Margin Account' ELSE 'Margin' END END FROM lk JOIN trade tc
    ON tc.t_id = lk.t_id WHERE su.se_t_id = lk.t_id RETURNING su.se_t_id AS t_id,
    su.se_cash_type) SELECT t.t_id, t.t_ca_id, t.t_tt_id, tt.tt_is_mrkt, t.t_is_cash,
    t.t_exec_name AS t_exec_name, t.t_bid_price, t.t_trade_price, t.t_qty, t.t_dts, se.se_amt,
    se.se_cash_due_date, coalesce(u.se_cash_type, se.se_cash_type) AS se_cash_type, ct.ct_amt,
    ct.ct_dts, ct.ct_name AS ct_name, h.th_dts, h.th_st_ids FROM l JOIN trade t ON t.t_id =
    l.t_id JOIN trade_type tt ON tt.tt_id = t.t_tt_id LEFT JOIN u ON u.t_id = t.t_id LEFT JOIN
    settlement se ON se.se_t_id = t.t_id LEFT JOIN cash_transaction ct ON t.t_is_cash AND
    ct.ct_t_id = t.t_id CROSS JOIN LATERAL (SELECT array_agg(x.th_dts ORDER BY x.th_dts) AS
    th_dts, array_agg(x.th_st_id ORDER BY x.th_dts) AS th_st_ids FROM (SELECT th_dts, th_st_id
    FROM trade_history WHERE th_t_id = t.t_id ORDER BY th_dts LIMIT 3) x) h ORDER BY l.ord;
END
$$;

-- Trade-Update frame 3: $1 symbol, $2..$3 window; toggles CT_NAME.
CREATE OR REPLACE FUNCTION tpce_trade_update_3(text, timestamp, timestamp)
RETURNS TABLE (
    t_id bigint, t_ca_id bigint, t_tt_id varchar, tt_is_mrkt boolean, t_is_cash boolean,
    t_exec_name varchar, t_bid_price numeric, t_trade_price numeric, t_qty integer,
    t_dts timestamp, se_amt numeric, se_cash_due_date date, se_cash_type varchar, ct_amt numeric,
    ct_dts timestamp, ct_name varchar, th_dts timestamp[], th_st_ids varchar[]
) LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH l AS (SELECT x.t_id, row_number() OVER (ORDER BY x.t_dts, x.t_id) AS ord FROM (SELECT
    t_id, t_dts FROM trade WHERE t_s_symb = $1::text AND t_dts >= $2::timestamp AND t_dts <=
    $3::timestamp ORDER BY t_dts, t_id LIMIT 20) x), lk AS MATERIALIZED (SELECT ct_t_id AS t_id
    FROM cash_transaction WHERE ct_t_id IN (SELECT l.t_id FROM l) ORDER BY ct_t_id FOR UPDATE), u
    AS (UPDATE cash_transaction cu SET ct_name = tc.tt_name || ' ' || tc.t_qty || CASE WHEN
    cu.ct_name LIKE '% shares of %' THEN ' Shares of ' ELSE ' shares of ' END || tc.s_name FROM
    lk JOIN (SELECT t.t_id, tt.tt_name, t.t_qty, s.s_name FROM trade t JOIN trade_type tt ON
    tt.tt_id = t.t_tt_id JOIN security s ON s.s_symb = t.t_s_symb) tc ON tc.t_id = lk.t_id WHERE
    cu.ct_t_id = lk.t_id RETURNING cu.ct_t_id AS t_id, cu.ct_name) SELECT t.t_id, t.t_ca_id,
    t.t_tt_id, tt.tt_is_mrkt, t.t_is_cash, t.t_exec_name AS t_exec_name, t.t_bid_price,
    t.t_trade_price, t.t_qty, t.t_dts, se.se_amt, se.se_cash_due_date, se.se_cash_type AS
    se_cash_type, ct.ct_amt, ct.ct_dts, coalesce(u.ct_name, ct.ct_name) AS ct_name, h.th_dts,
    h.th_st_ids FROM l JOIN trade t ON t.t_id = l.t_id JOIN trade_type tt ON tt.tt_id = t.t_tt_id
    LEFT JOIN u ON u.t_id = t.t_id LEFT JOIN settlement se ON se.se_t_id = t.t_id LEFT JOIN
    cash_transaction ct ON t.t_is_cash AND ct.ct_t_id = t.t_id CROSS JOIN LATERAL (SELECT
    array_agg(x.th_dts ORDER BY x.th_dts) AS th_dts, array_agg(x.th_st_id ORDER BY x.th_dts) AS
    th_st_ids FROM (SELECT th_dts, th_st_id FROM trade_history WHERE th_t_id = t.t_id ORDER BY
    th_dts LIMIT 3) x) h ORDER BY l.ord;
END
$$;
