-- TPC-C's five transactions as PL/pgSQL functions, called by `tidebench run --procedures`
-- (src/workload/tpcc/procedures.rs). `tidebench prepare --workload tpcc` installs them with
-- CREATE OR REPLACE, so installing again is harmless.
--
-- Each function runs the statements of its client-side transaction (new_order.rs, payment.rs,
-- order_status.rs, delivery.rs, stock_level.rs) in the same order, so it takes the same row
-- locks in the same order: district by its UPDATE, stock rows FOR UPDATE in (warehouse, item)
-- order, warehouse → district → customer in Payment. A call is one statement in its implicit
-- transaction, so one TPC-C transaction stays one server transaction.
--
-- Table names are unqualified: they resolve through the caller's search_path when a session
-- first plans a function's statements (PL/pgSQL keeps the plans per session), so the functions
-- work in whichever schema prepare moved the tables into.
--
-- Errors, by SQLSTATE:
--   TC001  New-Order's unused item (clause 2.4.2.3). The raise rolls the whole order back; the
--          client counts it as an expected rollback when it asked for the 1% rollback.
--   02000  (no data) a row the transaction needs is missing, as the client-side code reports
--          it: counted as failed, class "other".

-- Clauses 2.5.2.2 and 2.6.2.2: the customer named by last name is the one at position n/2
-- rounded up of the district's customers of that name sorted by C_FIRST. Reads without
-- locking, so Payment's lock order stays warehouse → district → customer. Null when none.
CREATE OR REPLACE FUNCTION tpcc_customer_by_last(p_w_id int, p_d_id int, p_c_last text)
RETURNS int LANGUAGE sql STABLE AS $$
    SELECT x.c_id
      FROM (SELECT c_id, row_number() OVER (ORDER BY c_first) AS rn, count(*) OVER () AS cnt
              FROM customer
             WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last) x
     WHERE x.rn = (x.cnt + 1) / 2
$$;

-- Clause 2.4.2.2. The arrays hold one element per order line, in line order. Returns O_ID.
CREATE OR REPLACE FUNCTION tpcc_new_order(
    p_w_id int, p_d_id int, p_c_id int,
    p_i_ids int[], p_supply_w_ids int[], p_quantities int[]
) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_lines int := cardinality(p_i_ids);
    v_found int;
    v_amounts numeric[];
    v_names text[];
    v_data text[];
    v_o_id int;
    v_d_tax numeric;
    v_w_tax numeric;
    v_c_discount numeric;
    v_c_last text;
    v_c_credit text;
    v_stock_rows int;
    v_dists text[];
BEGIN
    -- I_PRICE, I_NAME, I_DATA of every line's item; OL_AMOUNT = OL_QUANTITY * I_PRICE.
    SELECT count(i.i_id), array_agg(t.qty * i.i_price ORDER BY t.line),
           array_agg(i.i_name ORDER BY t.line), array_agg(i.i_data ORDER BY t.line)
      INTO v_found, v_amounts, v_names, v_data
      FROM unnest(p_i_ids, p_quantities) WITH ORDINALITY AS t(i_id, qty, line)
      LEFT JOIN item i ON i.i_id = t.i_id;
    IF v_found < v_lines THEN
        -- Clause 2.4.2.3: an unused item rolls the whole order back.
        RAISE EXCEPTION 'new-order: % of the items % are missing from table item',
            v_lines - v_found, p_i_ids USING ERRCODE = 'TC001';
    END IF;

    -- W_TAX; D_TAX and D_NEXT_O_ID read and incremented under the district's row lock;
    -- C_DISCOUNT, C_LAST, C_CREDIT.
    WITH d AS (UPDATE district SET d_next_o_id = d_next_o_id + 1
                WHERE d_w_id = p_w_id AND d_id = p_d_id
                RETURNING d_tax, d_next_o_id - 1 AS o_id)
    SELECT d.o_id, d.d_tax, w.w_tax, c.c_discount, c.c_last, c.c_credit
      INTO v_o_id, v_d_tax, v_w_tax, v_c_discount, v_c_last, v_c_credit
      FROM d, warehouse w, customer c
     WHERE w.w_id = p_w_id AND c.c_w_id = p_w_id AND c.c_d_id = p_d_id AND c.c_id = p_c_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'new-order: no district %/% or customer % there', p_w_id, p_d_id, p_c_id
            USING ERRCODE = '02000';
    END IF;

    -- Stock rows locked in (warehouse, item) order first, then each updated once; S_DIST_xx
    -- of the order's district kept by line for OL_DIST_INFO.
    WITH v AS (SELECT * FROM unnest(p_i_ids, p_supply_w_ids, p_quantities)
                        WITH ORDINALITY AS t(i_id, w_id, qty, line)),
         lk AS MATERIALIZED (SELECT s_i_id, s_w_id, v.qty FROM stock
                               JOIN v ON s_i_id = v.i_id AND s_w_id = v.w_id
                              ORDER BY s_w_id, s_i_id FOR UPDATE OF stock),
         u AS (UPDATE stock s SET
                 s_quantity = CASE WHEN s.s_quantity - lk.qty >= 10 THEN s.s_quantity - lk.qty
                                   ELSE s.s_quantity - lk.qty + 91 END,
                 s_ytd = s.s_ytd + lk.qty,
                 s_order_cnt = s.s_order_cnt + 1,
                 s_remote_cnt = s.s_remote_cnt + CASE WHEN lk.s_w_id <> p_w_id THEN 1 ELSE 0 END
               FROM lk WHERE s.s_i_id = lk.s_i_id AND s.s_w_id = lk.s_w_id
               RETURNING s.s_i_id, s.s_w_id, s.s_quantity,
                 CASE p_d_id WHEN 1 THEN s.s_dist_01 WHEN 2 THEN s.s_dist_02
                   WHEN 3 THEN s.s_dist_03 WHEN 4 THEN s.s_dist_04 WHEN 5 THEN s.s_dist_05
                   WHEN 6 THEN s.s_dist_06 WHEN 7 THEN s.s_dist_07 WHEN 8 THEN s.s_dist_08
                   WHEN 9 THEN s.s_dist_09 ELSE s.s_dist_10 END AS dist,
                 s.s_data)
    SELECT count(*), array_agg(u.dist ORDER BY v.line)
      INTO v_stock_rows, v_dists
      FROM v JOIN u ON u.s_i_id = v.i_id AND u.s_w_id = v.w_id;
    IF v_stock_rows < v_lines THEN
        RAISE EXCEPTION 'new-order: % stock rows of % found for items %',
            v_stock_rows, v_lines, p_i_ids USING ERRCODE = '02000';
    END IF;

    -- The ORDER (O_CARRIER_ID null), NEW-ORDER and ORDER-LINE rows (OL_DELIVERY_D null).
    WITH o AS (INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id,
                                   o_ol_cnt, o_all_local)
               VALUES (v_o_id, p_d_id, p_w_id, p_c_id, now(), NULL, v_lines,
                       (SELECT bool_and(sw = p_w_id) FROM unnest(p_supply_w_ids) AS sw)::int)),
         n AS (INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id))
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
    SELECT v_o_id, p_d_id, p_w_id, t.line, t.i_id, t.w_id, NULL, t.qty, t.amount, t.dist
      FROM unnest(p_i_ids, p_supply_w_ids, p_quantities, v_amounts, v_dists)
           WITH ORDINALITY AS t(i_id, w_id, qty, amount, dist, line);
    RETURN v_o_id;
END
$$;

-- Clause 2.5.2.2. The customer by id (p_c_id) or, when p_c_id is null, by last name: the
-- customers sorted by C_FIRST and the one at position n/2 rounded up. Returns C_ID.
CREATE OR REPLACE FUNCTION tpcc_payment(
    p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int,
    p_c_id int, p_c_last text, p_amount numeric
) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_c_id int := p_c_id;
    v_paid int;
BEGIN
    IF v_c_id IS NULL THEN
        v_c_id := tpcc_customer_by_last(p_c_w_id, p_c_d_id, p_c_last);
    END IF;
    -- W_YTD and D_YTD grow by H_AMOUNT; C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT,
    -- C_PAYMENT_CNT += 1; for bad credit the ids and amount go in front of C_DATA, which keeps
    -- its first 500 characters; H_DATA = W_NAME, 4 spaces, D_NAME.
    WITH w AS (UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id
               RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip),
         d AS (UPDATE district SET d_ytd = d_ytd + p_amount FROM w
                WHERE d_w_id = p_w_id AND d_id = p_d_id
               RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip, w.w_name),
         c AS (UPDATE customer SET c_balance = c_balance - p_amount,
                 c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1,
                 c_data = CASE WHEN c_credit = 'BC' THEN left(c_id || ' ' || c_d_id || ' '
                   || c_w_id || ' ' || p_d_id || ' ' || p_w_id || ' ' || p_amount || '|'
                   || c_data, 500) ELSE c_data END
               FROM d WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id
               RETURNING c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city,
                 c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount,
                 c_balance, left(c_data, 200) AS c_data, d.d_name, d.w_name),
         h AS (INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date,
                                    h_amount, h_data)
               SELECT c.c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, now(), p_amount,
                      c.w_name || '    ' || c.d_name FROM c)
    SELECT c.c_id INTO v_paid FROM c;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'payment: no customer % in district %/%',
            coalesce(p_c_id::text, p_c_last), p_c_w_id, p_c_d_id USING ERRCODE = '02000';
    END IF;
    RETURN v_paid;
END
$$;

-- Clause 2.6.2.2: the customer's C_BALANCE, C_FIRST, C_MIDDLE, C_LAST; their order with the
-- largest O_ID and its lines. The customer as in tpcc_payment. Returns that O_ID (null when
-- the customer has no order). STABLE: every statement sees the calling query's snapshot, as
-- the client-side single statement sees one.
CREATE OR REPLACE FUNCTION tpcc_order_status(
    p_w_id int, p_d_id int, p_c_id int, p_c_last text
) RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_c_id int := p_c_id;
    v_balance numeric;
    v_first text;
    v_middle text;
    v_last text;
    v_o_id int;
    v_entry_d timestamp;
    v_carrier_id int;
    v_items int[];
    v_supply_w_ids int[];
    v_quantities int[];
    v_amounts numeric[];
    v_delivery_d timestamp[];
BEGIN
    IF v_c_id IS NULL THEN
        v_c_id := tpcc_customer_by_last(p_w_id, p_d_id, p_c_last);
    END IF;
    SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
      FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'order-status: no customer % in district %/%',
            coalesce(p_c_id::text, p_c_last), p_w_id, p_d_id USING ERRCODE = '02000';
    END IF;
    SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry_d, v_carrier_id
      FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
     ORDER BY o_id DESC LIMIT 1;
    SELECT array_agg(ol_i_id), array_agg(ol_supply_w_id), array_agg(ol_quantity),
           array_agg(ol_amount), array_agg(ol_delivery_d)
      INTO v_items, v_supply_w_ids, v_quantities, v_amounts, v_delivery_d
      FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
    RETURN v_o_id;
END
$$;

-- Clause 2.7.4.2, for all 10 districts in one statement (the lock order of delivery.rs):
-- per district the NEW-ORDER row with the lowest NO_O_ID deleted, the order's O_CARRIER_ID
-- set, its lines' OL_DELIVERY_D set to now, the customer's C_BALANCE increased by their sum
-- of OL_AMOUNT and C_DELIVERY_CNT by one. A district with nothing to deliver is skipped.
-- Returns the number of districts delivered.
CREATE OR REPLACE FUNCTION tpcc_delivery(p_w_id int, p_carrier_id int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_delivered int;
BEGIN
    WITH n AS (DELETE FROM new_order x
                USING (SELECT d, (SELECT min(no_o_id) FROM new_order
                                   WHERE no_w_id = p_w_id AND no_d_id = d) AS o_id
                         FROM generate_series(1, 10) AS d) f
                WHERE x.no_w_id = p_w_id AND x.no_d_id = f.d AND x.no_o_id = f.o_id
               RETURNING x.no_d_id AS d_id, x.no_o_id AS o_id),
         o AS (UPDATE orders r SET o_carrier_id = p_carrier_id FROM n
                WHERE r.o_w_id = p_w_id AND r.o_d_id = n.d_id AND r.o_id = n.o_id
               RETURNING r.o_d_id AS d_id, r.o_c_id AS c_id),
         l AS (UPDATE order_line ol SET ol_delivery_d = now() FROM n
                WHERE ol.ol_w_id = p_w_id AND ol.ol_d_id = n.d_id AND ol.ol_o_id = n.o_id
               RETURNING ol.ol_d_id AS d_id, ol.ol_amount),
         t AS (SELECT o.d_id, o.c_id, sum(l.ol_amount) AS amount
                 FROM o JOIN l ON l.d_id = o.d_id GROUP BY o.d_id, o.c_id),
         c AS (UPDATE customer cu SET c_balance = cu.c_balance + t.amount,
                 c_delivery_cnt = cu.c_delivery_cnt + 1
                 FROM t WHERE cu.c_w_id = p_w_id AND cu.c_d_id = t.d_id AND cu.c_id = t.c_id
               RETURNING cu.c_d_id)
    SELECT count(*) INTO v_delivered FROM n;
    RETURN v_delivered;
END
$$;

-- Clause 2.8.2.2: how many distinct items of the district's last 20 orders have a stock in
-- the home warehouse below the threshold. STABLE, read-only.
CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w_id int, p_d_id int, p_threshold int)
RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_next int;
    v_low int;
BEGIN
    -- D_NEXT_O_ID first, so the order-line range is a known 20 orders wide when the count is
    -- planned; joined, the planner may scan all of stock with parallel workers, and each
    -- worker counts as a committed transaction in pg_stat_database.
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT count(DISTINCT s.s_i_id) INTO v_low
      FROM order_line ol
      JOIN stock s ON s.s_w_id = p_w_id AND s.s_i_id = ol.ol_i_id
     WHERE ol.ol_w_id = p_w_id AND ol.ol_d_id = p_d_id
       AND ol.ol_o_id >= v_next - 20 AND ol.ol_o_id < v_next
       AND s.s_quantity < p_threshold;
    RETURN v_low;
END
$$;
