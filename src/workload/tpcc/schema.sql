-- TPC-C tables (TPC-C 5.11, clause 1.3): the spec's columns, types and primary keys.
-- The loader runs the part above the marker before COPY and the part below it after, so the
-- indexes are built once over the loaded rows instead of maintained row by row.

CREATE TABLE warehouse (
    w_id int NOT NULL,
    w_name varchar(10),
    w_street_1 varchar(20),
    w_street_2 varchar(20),
    w_city varchar(20),
    w_state char(2),
    w_zip char(9),
    w_tax numeric(4,4),
    w_ytd numeric(12,2)
);
CREATE TABLE district (
    d_id int NOT NULL,
    d_w_id int NOT NULL,
    d_name varchar(10),
    d_street_1 varchar(20),
    d_street_2 varchar(20),
    d_city varchar(20),
    d_state char(2),
    d_zip char(9),
    d_tax numeric(4,4),
    d_ytd numeric(12,2),
    d_next_o_id int
);
CREATE TABLE customer (
    c_id int NOT NULL,
    c_d_id int NOT NULL,
    c_w_id int NOT NULL,
    c_first varchar(16),
    c_middle char(2),
    c_last varchar(16),
    c_street_1 varchar(20),
    c_street_2 varchar(20),
    c_city varchar(20),
    c_state char(2),
    c_zip char(9),
    c_phone char(16),
    c_since timestamp,
    c_credit char(2),
    c_credit_lim numeric(12,2),
    c_discount numeric(4,4),
    c_balance numeric(12,2),
    c_ytd_payment numeric(12,2),
    c_payment_cnt int,
    c_delivery_cnt int,
    c_data varchar(500)
);
-- No primary key (clause 1.3: history rows need not be unique).
CREATE TABLE history (
    h_c_id int,
    h_c_d_id int,
    h_c_w_id int,
    h_d_id int,
    h_w_id int,
    h_date timestamp,
    h_amount numeric(6,2),
    h_data varchar(24)
);
CREATE TABLE new_order (
    no_o_id int NOT NULL,
    no_d_id int NOT NULL,
    no_w_id int NOT NULL
);
CREATE TABLE orders (
    o_id int NOT NULL,
    o_d_id int NOT NULL,
    o_w_id int NOT NULL,
    o_c_id int,
    o_entry_d timestamp,
    o_carrier_id int,
    o_ol_cnt int,
    o_all_local int
);
CREATE TABLE order_line (
    ol_o_id int NOT NULL,
    ol_d_id int NOT NULL,
    ol_w_id int NOT NULL,
    ol_number int NOT NULL,
    ol_i_id int,
    ol_supply_w_id int,
    ol_delivery_d timestamp,
    ol_quantity int,
    ol_amount numeric(6,2),
    ol_dist_info char(24)
);
CREATE TABLE item (
    i_id int NOT NULL,
    i_im_id int,
    i_name varchar(24),
    i_price numeric(5,2),
    i_data varchar(50)
);
CREATE TABLE stock (
    s_i_id int NOT NULL,
    s_w_id int NOT NULL,
    s_quantity int,
    s_dist_01 char(24),
    s_dist_02 char(24),
    s_dist_03 char(24),
    s_dist_04 char(24),
    s_dist_05 char(24),
    s_dist_06 char(24),
    s_dist_07 char(24),
    s_dist_08 char(24),
    s_dist_09 char(24),
    s_dist_10 char(24),
    s_ytd int,
    s_order_cnt int,
    s_remote_cnt int,
    s_data varchar(50)
);
-- @indexes (one statement per line: the loader runs them over parallel sessions)
ALTER TABLE warehouse ADD PRIMARY KEY (w_id);
ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id);
ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
CREATE INDEX customer_by_name ON customer (c_w_id, c_d_id, c_last, c_first);
ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
CREATE INDEX orders_by_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE item ADD PRIMARY KEY (i_id);
ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id);
