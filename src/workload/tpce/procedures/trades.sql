-- TPC-E's three trade-flow transactions as PL/pgSQL functions, called by `tidebench run
-- --procedures` (src/workload/tpce/txn/trade_order.rs, trade_result.rs, market_feed.rs).
-- `prepare` installs them with CREATE OR REPLACE, so installing again is harmless.
--
-- Each function makes the same changes as its client-side transaction and returns the same
-- rows; the client opens the transaction at the isolation level of tpce.md §3.1 (repeatable
-- read for Trade-Order and Market-Feed, serializable for Trade-Result) and commits or rolls
-- back, so one tidebench transaction stays one server transaction.
--
-- Table names are unqualified: they resolve through the caller's search_path when a session
-- first plans a function's statements, so the functions work in whichever schema the tables
-- are.
--
-- Errors, by SQLSTATE:
--   02000  (no data) a row the transaction needs is missing, as the client-side code reports
--          it: counted as failed, class "other".
-- Trade-Order's refused executor is not an error: the function returns status 'unauthorized'
-- having written nothing, and the client rolls back (an expected rollback).

-- Trade-Order frames 1-4 (tpce.md §3.2). p_limit is the limit or stop price of a limit order
-- (ignored for a market order, which takes LAST_TRADE's price); p_is_cash false is a margin
-- order. Returns one row: o_status 'unauthorized' (everything else null) or SBMT / PNDG with
-- the new trade, its symbol, its bid (the requested price) and frame 3's estimate: lots
-- walked, buy and sell value, tax, commission, charge and, for a margin order, assets.
CREATE OR REPLACE FUNCTION tpce_trade_order(
    p_ca_id bigint, p_exec_f_name text, p_exec_l_name text, p_exec_tax_id text,
    p_symbol text, p_co_name text, p_issue text, p_tt_id text, p_qty int, p_limit numeric,
    p_is_lifo boolean, p_is_cash boolean
) RETURNS TABLE (
    o_status text, o_t_id bigint, o_symbol text, o_bid numeric, o_lots int,
    o_buy_value numeric, o_sell_value numeric, o_tax numeric, o_comm numeric,
    o_charge numeric, o_assets numeric
) LANGUAGE plpgsql AS $$
DECLARE
    v_b_id bigint;
    v_tax_st smallint;
    v_bal numeric;
    v_c_id bigint;
    v_tier smallint;
    v_f_name text;
    v_l_name text;
    v_tax_id text;
    v_b_name text;
    v_ex_id text;
    v_market_price numeric;
    v_is_sell boolean;
    v_is_mrkt boolean;
    v_needed int;
    v_closed int;
    v_lot record;
    v_rates numeric;
    v_rate numeric;
BEGIN
    -- Frame 1: account, customer, broker.
    SELECT ca.ca_b_id, ca.ca_tax_st, ca.ca_bal, c.c_id, c.c_tier, c.c_f_name, c.c_l_name,
           c.c_tax_id, b.b_name
      INTO v_b_id, v_tax_st, v_bal, v_c_id, v_tier, v_f_name, v_l_name, v_tax_id, v_b_name
      FROM customer_account ca
      JOIN customer c ON c.c_id = ca.ca_c_id
      JOIN broker b ON b.b_id = ca.ca_b_id
     WHERE ca.ca_id = p_ca_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-order on account %: no such account', p_ca_id
            USING ERRCODE = '02000';
    END IF;

    -- Frame 2: an executor other than the owner needs an ACCOUNT_PERMISSION row.
    IF p_exec_f_name <> v_f_name OR p_exec_l_name <> v_l_name
       OR p_exec_tax_id <> v_tax_id THEN
        PERFORM 1 FROM account_permission
          WHERE ap_ca_id = p_ca_id AND ap_f_name = p_exec_f_name
            AND ap_l_name = p_exec_l_name AND ap_tax_id = p_exec_tax_id;
        IF NOT FOUND THEN
            o_status := 'unauthorized';
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;

    -- Frame 3: the security, its price, the order's type.
    IF p_symbol IS NOT NULL THEN
        SELECT s_symb, s_ex_id INTO o_symbol, v_ex_id FROM security WHERE s_symb = p_symbol;
    ELSE
        SELECT s.s_symb, s.s_ex_id INTO o_symbol, v_ex_id
          FROM company co JOIN security s ON s.s_co_id = co.co_id
         WHERE co.co_name = p_co_name AND s.s_issue = p_issue;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-order on account %: no security %',
            p_ca_id, coalesce(p_symbol, p_co_name || ' ' || p_issue) USING ERRCODE = '02000';
    END IF;
    SELECT lt_price INTO v_market_price FROM last_trade WHERE lt_s_symb = o_symbol;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-order on account %: no LAST_TRADE of %', p_ca_id, o_symbol
            USING ERRCODE = '02000';
    END IF;
    SELECT tt_is_sell, tt_is_mrkt INTO v_is_sell, v_is_mrkt FROM trade_type WHERE tt_id = p_tt_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-order on account %: no such account (or trade type)', p_ca_id
            USING ERRCODE = '02000';
    END IF;
    o_bid := CASE WHEN v_is_mrkt THEN v_market_price
                  ELSE coalesce(p_limit, v_market_price) END;

    -- The estimate: the lots the order would close (a sell its long lots, a buy its shorts),
    -- newest first for LIFO, as Trade-Result will close them.
    o_lots := 0;
    o_buy_value := 0;
    o_sell_value := 0;
    v_needed := p_qty;
    FOR v_lot IN
        SELECT h_qty, h_price FROM holding
         WHERE h_ca_id = p_ca_id AND h_s_symb = o_symbol
           AND CASE WHEN v_is_sell THEN h_qty > 0 ELSE h_qty < 0 END
         ORDER BY CASE WHEN p_is_lifo THEN h_dts END DESC,
                  CASE WHEN p_is_lifo THEN h_t_id END DESC, h_dts, h_t_id
    LOOP
        EXIT WHEN v_needed = 0;
        v_closed := least(abs(v_lot.h_qty), v_needed);
        IF v_is_sell THEN
            o_buy_value := o_buy_value + v_closed * v_lot.h_price;
            o_sell_value := o_sell_value + v_closed * o_bid;
        ELSE
            o_sell_value := o_sell_value + v_closed * v_lot.h_price;
            o_buy_value := o_buy_value + v_closed * o_bid;
        END IF;
        v_needed := v_needed - v_closed;
        o_lots := o_lots + 1;
    END LOOP;

    -- Tax as Trade-Result charges it: a taxable account's sell closing long lots at a gain.
    o_tax := 0;
    IF v_is_sell AND v_tax_st <> 0 AND o_sell_value > o_buy_value THEN
        SELECT coalesce(sum(tx.tx_rate), 0) INTO v_rates
          FROM customer_taxrate cx JOIN taxrate tx ON tx.tx_id = cx.cx_tx_id
         WHERE cx.cx_c_id = v_c_id;
        o_tax := round((o_sell_value - o_buy_value) * v_rates, 2);
    END IF;

    SELECT cr_rate INTO v_rate FROM commission_rate
     WHERE cr_c_tier = v_tier AND cr_tt_id = p_tt_id AND cr_ex_id = v_ex_id
       AND p_qty BETWEEN cr_from_qty AND cr_to_qty;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-order on account %: no COMMISSION_RATE row for the order',
            p_ca_id USING ERRCODE = '02000';
    END IF;
    o_comm := round(v_rate / 100 * p_qty * o_bid, 2);
    SELECT ch_chrg INTO o_charge FROM charge WHERE ch_tt_id = p_tt_id AND ch_c_tier = v_tier;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-order on account %: no CHARGE row for its type and tier',
            p_ca_id USING ERRCODE = '02000';
    END IF;
    IF NOT p_is_cash THEN
        o_assets := v_bal + coalesce(
            (SELECT sum(h.hs_qty * x.lt_price) FROM holding_summary h
               JOIN last_trade x ON x.lt_s_symb = h.hs_s_symb WHERE h.hs_ca_id = p_ca_id), 0);
    END IF;

    -- Frame 4: the trade, its request if it waits for its price, its history.
    o_status := CASE WHEN v_is_mrkt THEN 'SBMT' ELSE 'PNDG' END;
    INSERT INTO trade (t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_bid_price,
                       t_ca_id, t_exec_name, t_trade_price, t_chrg, t_comm, t_tax, t_lifo)
    VALUES (nextval('t_id_seq'), now(), o_status, p_tt_id, p_is_cash, o_symbol, p_qty, o_bid,
            p_ca_id, p_exec_f_name || ' ' || p_exec_l_name, NULL, o_charge, o_comm, 0,
            p_is_lifo)
    RETURNING t_id INTO o_t_id;
    IF NOT v_is_mrkt THEN
        INSERT INTO trade_request (tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price, tr_b_id)
        VALUES (o_t_id, p_tt_id, o_symbol, p_qty, o_bid, v_b_id);
    END IF;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (o_t_id, clock_timestamp(), o_status);
    RETURN NEXT;
END
$$;

-- Trade-Result frames 1-6 (tpce.md §3.2; the rules in trade_result.rs's header): trade
-- p_t_id, which must be SBMT, executed at p_price. Returns the holding lots touched (the
-- HOLDING_HISTORY rows written, the new lot included).
CREATE OR REPLACE FUNCTION tpce_trade_result(p_t_id bigint, p_price numeric)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_ca_id bigint;
    v_tt_id text;
    v_symb text;
    v_qty int;
    v_is_cash boolean;
    v_lifo boolean;
    v_tt_name text;
    v_is_sell boolean;
    v_held int;
    v_b_id bigint;
    v_c_id bigint;
    v_tax_st smallint;
    v_tier smallint;
    v_s_name text;
    v_ex_id text;
    v_needed int;
    v_closed int;
    v_after int;
    v_lot record;
    v_gain numeric := 0;
    v_touched int := 0;
    v_rates numeric;
    v_tax numeric := 0;
    v_rate numeric;
    v_charge numeric;
    v_comm numeric;
    v_amount numeric;
BEGIN
    -- Frame 1: the trade, locked, and its type; the pair's summary.
    SELECT t.t_ca_id, t.t_tt_id, t.t_s_symb, t.t_qty, t.t_is_cash, t.t_lifo,
           tt.tt_name, tt.tt_is_sell
      INTO v_ca_id, v_tt_id, v_symb, v_qty, v_is_cash, v_lifo, v_tt_name, v_is_sell
      FROM trade t JOIN trade_type tt ON tt.tt_id = t.t_tt_id
     WHERE t.t_id = p_t_id AND t.t_st_id = 'SBMT'
       FOR UPDATE OF t;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-result %: no submitted (SBMT) trade of that id', p_t_id
            USING ERRCODE = '02000';
    END IF;
    v_held := coalesce((SELECT hs_qty FROM holding_summary
                         WHERE hs_ca_id = v_ca_id AND hs_s_symb = v_symb), 0);

    -- Frame 2: the account, locked; lots closed in order, the rest opened as a new lot.
    SELECT ca_b_id, ca_c_id, ca_tax_st INTO v_b_id, v_c_id, v_tax_st
      FROM customer_account WHERE ca_id = v_ca_id FOR UPDATE;
    v_needed := v_qty;
    FOR v_lot IN
        SELECT h_t_id, h_qty, h_price FROM holding
         WHERE h_ca_id = v_ca_id AND h_s_symb = v_symb
           AND CASE WHEN v_is_sell THEN h_qty > 0 ELSE h_qty < 0 END
         ORDER BY CASE WHEN v_lifo THEN h_dts END DESC,
                  CASE WHEN v_lifo THEN h_t_id END DESC, h_dts, h_t_id
    LOOP
        EXIT WHEN v_needed = 0;
        v_closed := least(abs(v_lot.h_qty), v_needed);
        v_after := CASE WHEN v_is_sell THEN v_lot.h_qty - v_closed
                        ELSE v_lot.h_qty + v_closed END;
        INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
        VALUES (v_lot.h_t_id, p_t_id, v_lot.h_qty, v_after);
        IF v_after = 0 THEN
            DELETE FROM holding WHERE h_t_id = v_lot.h_t_id;
        ELSE
            UPDATE holding SET h_qty = v_after WHERE h_t_id = v_lot.h_t_id;
        END IF;
        IF v_is_sell THEN
            v_gain := v_gain + v_closed * (p_price - v_lot.h_price);
        END IF;
        v_needed := v_needed - v_closed;
        v_touched := v_touched + 1;
    END LOOP;
    IF v_needed > 0 THEN
        v_after := CASE WHEN v_is_sell THEN -v_needed ELSE v_needed END;
        INSERT INTO holding (h_t_id, h_ca_id, h_s_symb, h_dts, h_price, h_qty)
        VALUES (p_t_id, v_ca_id, v_symb, now(), p_price, v_after);
        INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
        VALUES (p_t_id, p_t_id, 0, v_after);
        v_touched := v_touched + 1;
    END IF;
    v_held := v_held + CASE WHEN v_is_sell THEN -v_qty ELSE v_qty END;
    IF v_held = 0 THEN
        DELETE FROM holding_summary WHERE hs_ca_id = v_ca_id AND hs_s_symb = v_symb;
    ELSE
        INSERT INTO holding_summary (hs_ca_id, hs_s_symb, hs_qty) VALUES (v_ca_id, v_symb, v_held)
        ON CONFLICT (hs_ca_id, hs_s_symb) DO UPDATE SET hs_qty = excluded.hs_qty;
    END IF;

    -- Frame 3: tax on the gain of the long lots a sell closed, for taxable accounts.
    IF v_tax_st <> 0 AND v_gain > 0 THEN
        SELECT coalesce(sum(tx.tx_rate), 0) INTO v_rates
          FROM customer_taxrate cx JOIN taxrate tx ON tx.tx_id = cx.cx_tx_id
         WHERE cx.cx_c_id = v_c_id;
        v_tax := round(v_gain * v_rates, 2);
    END IF;

    -- Frame 4: the security's exchange and name, the customer's tier, the rates.
    SELECT s_name, s_ex_id INTO v_s_name, v_ex_id FROM security WHERE s_symb = v_symb;
    SELECT c_tier INTO v_tier FROM customer WHERE c_id = v_c_id;
    SELECT cr_rate INTO v_rate FROM commission_rate
     WHERE cr_c_tier = v_tier AND cr_tt_id = v_tt_id AND cr_ex_id = v_ex_id
       AND v_qty BETWEEN cr_from_qty AND cr_to_qty;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-result %: no COMMISSION_RATE row for its tier, type and exchange',
            p_t_id USING ERRCODE = '02000';
    END IF;
    SELECT ch_chrg INTO v_charge FROM charge WHERE ch_tt_id = v_tt_id AND ch_c_tier = v_tier;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade-result %: no CHARGE row for its type and tier', p_t_id
            USING ERRCODE = '02000';
    END IF;
    v_comm := round(v_rate / 100 * v_qty * p_price, 2);

    -- Frame 5: the trade completed, its history, the broker's counters.
    UPDATE trade SET t_st_id = 'CMPT', t_dts = now(), t_trade_price = p_price,
                     t_chrg = v_charge, t_comm = v_comm, t_tax = v_tax
     WHERE t_id = p_t_id;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (p_t_id, clock_timestamp(), 'CMPT');
    UPDATE broker SET b_num_trades = b_num_trades + 1, b_comm_total = b_comm_total + v_comm
     WHERE b_id = v_b_id;

    -- Frame 6: settlement; a cash trade moves the balance and records the cash.
    v_amount := CASE WHEN v_is_sell THEN v_qty * p_price ELSE -(v_qty * p_price) END
                - v_charge - v_comm - CASE WHEN v_tax_st = 1 THEN v_tax ELSE 0 END;
    INSERT INTO settlement (se_t_id, se_cash_type, se_cash_due_date, se_amt)
    VALUES (p_t_id, CASE WHEN v_is_cash THEN 'Cash Account' ELSE 'Margin' END,
            current_date + 2, v_amount);
    IF v_is_cash THEN
        UPDATE customer_account SET ca_bal = ca_bal + v_amount WHERE ca_id = v_ca_id;
        INSERT INTO cash_transaction (ct_t_id, ct_dts, ct_amt, ct_name)
        VALUES (p_t_id, now(), v_amount, v_tt_name || ' ' || v_qty || ' shares of ' || v_s_name);
    END IF;
    RETURN v_touched;
END
$$;

-- Market-Feed (tpce.md §3.2, §5): a ticker batch as three arrays in entry order. Updates
-- LAST_TRADE (rows locked in symbol order; a symbol listed twice adds both quantities and
-- ends at its later price), then triggers the TRADE_REQUEST rows in the money at any of their
-- symbol's prices: trade SBMT, history row, request deleted. Returns the triggered requests
-- by trade id.
CREATE OR REPLACE FUNCTION tpce_market_feed(p_symbols text[], p_prices numeric[], p_qtys int[])
RETURNS TABLE (o_t_id bigint, o_symbol text, o_tt_id text, o_qty int, o_bid numeric)
LANGUAGE plpgsql AS $$
DECLARE
    v_symbols int;
    v_updated int;
BEGIN
    WITH e AS (SELECT * FROM unnest(p_symbols, p_prices, p_qtys)
                        WITH ORDINALITY AS v(symb, price, qty, n)),
         agg AS (SELECT symb, sum(qty) AS qty, (array_agg(price ORDER BY n DESC))[1] AS price
                   FROM e GROUP BY symb),
         lk AS MATERIALIZED (SELECT lt_s_symb FROM last_trade
                              WHERE lt_s_symb IN (SELECT symb FROM agg)
                              ORDER BY lt_s_symb FOR UPDATE)
    UPDATE last_trade SET lt_price = agg.price, lt_vol = lt_vol + agg.qty, lt_dts = now()
      FROM agg JOIN lk ON lk.lt_s_symb = agg.symb
     WHERE last_trade.lt_s_symb = agg.symb;
    GET DIAGNOSTICS v_updated = ROW_COUNT;
    SELECT count(DISTINCT s) INTO v_symbols FROM unnest(p_symbols) AS s;
    IF v_updated < v_symbols THEN
        RAISE EXCEPTION 'market-feed: % of the symbols % have no LAST_TRADE row',
            v_symbols - v_updated, p_symbols USING ERRCODE = '02000';
    END IF;

    RETURN QUERY
    WITH e AS (SELECT * FROM unnest(p_symbols, p_prices) AS v(symb, price)),
         hit AS (SELECT DISTINCT r.tr_t_id FROM trade_request r JOIN e ON e.symb = r.tr_s_symb
                  WHERE CASE WHEN r.tr_tt_id = 'TLS' THEN e.price >= r.tr_bid_price
                             ELSE e.price <= r.tr_bid_price END),
         del AS (DELETE FROM trade_request r USING hit WHERE r.tr_t_id = hit.tr_t_id
                 RETURNING r.tr_t_id, r.tr_s_symb, r.tr_tt_id, r.tr_qty, r.tr_bid_price),
         t AS (UPDATE trade SET t_st_id = 'SBMT', t_dts = now() FROM del
                WHERE trade.t_id = del.tr_t_id RETURNING 1),
         th AS (INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
                SELECT del.tr_t_id, clock_timestamp(), 'SBMT' FROM del RETURNING 1)
    SELECT del.tr_t_id::bigint, del.tr_s_symb::text, del.tr_tt_id::text, del.tr_qty::int,
           del.tr_bid_price::numeric
      FROM del ORDER BY del.tr_t_id;
END
$$;
