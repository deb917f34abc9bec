-- Data-Maintenance (src/workload/tpce/txn/data_maintenance.rs) as a PL/pgSQL function, called
-- by `tidebench run --procedures` through the market exchange emulator. `tidebench prepare
-- --workload tpce` installs it with CREATE OR REPLACE, so installing again is harmless.
--
-- The function runs the module's client-side statement word for word (its unit test checks it),
-- with the parameters as positional `$n`: one branch per table, the others gated off by $1, so
-- both back ends change the same rows. The caller opens the transaction (read committed) and
-- commits it. Table names are unqualified: they resolve through the caller's search_path.

-- $1 the table (TPC-E's name), $2 CA_ID, $3 C_ID, $4 CO_ID, $5 symbol, $6 day of the month,
-- $7 volume increment, $8 TX_ID (the unused ones 0 or empty). Returns the rows changed.
CREATE OR REPLACE FUNCTION tpce_data_maintenance(text, bigint, bigint, bigint, text, integer,
                                                 integer, text)
RETURNS TABLE (
    changed bigint
) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    WITH ap AS (UPDATE account_permission
           SET ap_acl = CASE WHEN left(ap_acl, 1) = '1' THEN '0' ELSE '1' END
                        || substr(ap_acl, 2)
           WHERE $1::text = 'ACCOUNT_PERMISSION' AND ap_ca_id = $2::bigint
           RETURNING 1),
    ad AS (UPDATE address
           SET ad_line2 = CASE WHEN ad_line2 IS DISTINCT FROM 'Rear entrance'
                               THEN 'Rear entrance' END
           WHERE $1::text = 'ADDRESS' AND ad_id = (
                 SELECT c_ad_id FROM customer WHERE c_id = $3::bigint
                 UNION ALL SELECT co_ad_id FROM company WHERE co_id = $4::bigint
                 LIMIT 1)
           RETURNING 1),
    co AS (UPDATE company
           SET co_sp_rate = CASE WHEN co_sp_rate = 'AAA' THEN 'AA' ELSE 'AAA' END
           WHERE $1::text = 'COMPANY' AND co_id = $4::bigint RETURNING 1),
    cu AS (UPDATE customer
           SET c_email_2 = split_part(c_email_2, '@', 1)
                           || CASE WHEN c_email_2 LIKE '%@wharfmail.com'
                                   THEN '@reedpost.net' ELSE '@wharfmail.com' END
           WHERE $1::text = 'CUSTOMER' AND c_id = $3::bigint RETURNING 1),
    cx AS (UPDATE customer_taxrate SET cx_tx_id = cx_tx_id
           WHERE $1::text = 'CUSTOMER_TAXRATE' AND cx_c_id = $3::bigint RETURNING 1),
    dm AS (UPDATE daily_market SET dm_vol = dm_vol + $7::int
           WHERE $1::text = 'DAILY_MARKET' AND dm_s_symb = $5::text
             AND extract(day FROM dm_date) = $6::int
           RETURNING 1),
    ex AS (UPDATE exchange
           SET ex_desc = split_part(ex_desc, ' (updated ', 1) || ' (updated '
                         || to_char(now(), 'YYYY-MM-DD HH24:MI:SS') || ')'
           WHERE $1::text = 'EXCHANGE' RETURNING 1),
    fi AS (UPDATE financial
           SET fi_qtr_start_date = fi_qtr_start_date
               + CASE WHEN extract(day FROM fi_qtr_start_date) = 1 THEN 1 ELSE -1 END
           WHERE $1::text = 'FINANCIAL' AND fi_co_id = $4::bigint RETURNING 1),
    ni AS (UPDATE news_item
           SET ni_dts = ni_dts + CASE WHEN (ni_dts::date - date '2000-01-01') % 2 = 0
                                      THEN interval '1 day' ELSE interval '-1 day' END
           WHERE $1::text = 'NEWS_ITEM'
             AND ni_id IN (SELECT nx_ni_id FROM news_xref WHERE nx_co_id = $4::bigint)
           RETURNING 1),
    se AS (UPDATE security
           SET s_exch_date = s_exch_date
               + CASE WHEN (s_exch_date - date '2000-01-01') % 2 = 0 THEN 1 ELSE -1 END
           WHERE $1::text = 'SECURITY' AND s_symb = $5::text RETURNING 1),
    tx AS (UPDATE taxrate
           SET tx_name = CASE WHEN tx_name LIKE '%income tax%'
                              THEN replace(tx_name, 'income tax', 'Income Tax')
                              ELSE replace(tx_name, 'Income Tax', 'income tax') END
           WHERE $1::text = 'TAXRATE' AND tx_id = $8::text RETURNING 1),
    dropped AS (SELECT wi.wi_wl_id, wi.wi_s_symb FROM watch_list wl
                JOIN watch_item wi ON wi.wi_wl_id = wl.wl_id
                WHERE $1::text = 'WATCH_ITEM' AND wl.wl_c_id = $3::bigint
                ORDER BY wi.wi_s_symb < $5::text, wi.wi_s_symb, wi.wi_wl_id LIMIT 1),
    added AS (SELECT x.s_symb FROM (
                (SELECT s.s_symb FROM security s
                 WHERE $1::text = 'WATCH_ITEM' AND s.s_symb >= $5::text
                   AND NOT EXISTS (SELECT FROM watch_item l JOIN dropped d
                                     ON l.wi_wl_id = d.wi_wl_id
                                   WHERE l.wi_s_symb = s.s_symb)
                 ORDER BY s.s_symb LIMIT 1)
                UNION ALL
                (SELECT s.s_symb FROM security s
                 WHERE $1::text = 'WATCH_ITEM' AND s.s_symb < $5::text
                   AND NOT EXISTS (SELECT FROM watch_item l JOIN dropped d
                                     ON l.wi_wl_id = d.wi_wl_id
                                   WHERE l.wi_s_symb = s.s_symb)
                 ORDER BY s.s_symb LIMIT 1)) x LIMIT 1),
    wi AS (UPDATE watch_item w SET wi_s_symb = added.s_symb FROM dropped, added
           WHERE w.wi_wl_id = dropped.wi_wl_id AND w.wi_s_symb = dropped.wi_s_symb
           RETURNING 1)
    SELECT (SELECT count(*) FROM ap) + (SELECT count(*) FROM ad)
           + (SELECT count(*) FROM co) + (SELECT count(*) FROM cu)
           + (SELECT count(*) FROM cx) + (SELECT count(*) FROM dm)
           + (SELECT count(*) FROM ex) + (SELECT count(*) FROM fi)
           + (SELECT count(*) FROM ni) + (SELECT count(*) FROM se)
           + (SELECT count(*) FROM tx) + (SELECT count(*) FROM wi) AS changed;
END
$$;
