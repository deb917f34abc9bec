-- TPC-E-like tables (tpce.md §2): the 33 tables of TPC-E's clause 2.2 with its column names and
-- primary keys. Types are wider than the spec's where a transaction could overflow them (prices
-- numeric(12,2) as DBT-5 found necessary; money numeric(14,2)), and text columns are varchar,
-- never char(n), so values compare and print without padding.
-- The loader runs the part above the marker before COPY and the part below it after, so keys
-- and indexes are built once over the loaded rows instead of maintained row by row.

-- Customer tables (clause 2.2.5)
CREATE TABLE account_permission (
    ap_ca_id bigint NOT NULL,
    ap_acl varchar(4) NOT NULL,
    ap_tax_id varchar(20) NOT NULL,
    ap_l_name varchar(25) NOT NULL,
    ap_f_name varchar(20) NOT NULL
);
CREATE TABLE customer (
    c_id bigint NOT NULL,
    c_tax_id varchar(20) NOT NULL,
    c_st_id varchar(4) NOT NULL,
    c_l_name varchar(25) NOT NULL,
    c_f_name varchar(20) NOT NULL,
    c_m_name varchar(1),
    c_gndr varchar(1),
    c_tier smallint NOT NULL,
    c_dob date NOT NULL,
    c_ad_id bigint NOT NULL,
    c_ctry_1 varchar(3),
    c_area_1 varchar(3),
    c_local_1 varchar(10),
    c_ext_1 varchar(5),
    c_ctry_2 varchar(3),
    c_area_2 varchar(3),
    c_local_2 varchar(10),
    c_ext_2 varchar(5),
    c_ctry_3 varchar(3),
    c_area_3 varchar(3),
    c_local_3 varchar(10),
    c_ext_3 varchar(5),
    c_email_1 varchar(50),
    c_email_2 varchar(50)
);
CREATE TABLE customer_account (
    ca_id bigint NOT NULL,
    ca_b_id bigint NOT NULL,
    ca_c_id bigint NOT NULL,
    ca_name varchar(50),
    ca_tax_st smallint NOT NULL,
    ca_bal numeric(14,2) NOT NULL
);
CREATE TABLE customer_taxrate (
    cx_tx_id varchar(4) NOT NULL,
    cx_c_id bigint NOT NULL
);
CREATE TABLE holding (
    h_t_id bigint NOT NULL,
    h_ca_id bigint NOT NULL,
    h_s_symb varchar(15) NOT NULL,
    h_dts timestamp NOT NULL,
    h_price numeric(12,2) NOT NULL,
    h_qty int NOT NULL
);
CREATE TABLE holding_history (
    hh_h_t_id bigint NOT NULL,
    hh_t_id bigint NOT NULL,
    hh_before_qty int NOT NULL,
    hh_after_qty int NOT NULL
);
CREATE TABLE holding_summary (
    hs_ca_id bigint NOT NULL,
    hs_s_symb varchar(15) NOT NULL,
    hs_qty int NOT NULL
);
CREATE TABLE watch_item (
    wi_wl_id bigint NOT NULL,
    wi_s_symb varchar(15) NOT NULL
);
CREATE TABLE watch_list (
    wl_id bigint NOT NULL,
    wl_c_id bigint NOT NULL
);

-- Broker tables (clause 2.2.6)
CREATE TABLE broker (
    b_id bigint NOT NULL,
    b_st_id varchar(4) NOT NULL,
    b_name varchar(49) NOT NULL,
    b_num_trades int NOT NULL,
    b_comm_total numeric(14,2) NOT NULL
);
CREATE TABLE cash_transaction (
    ct_t_id bigint NOT NULL,
    ct_dts timestamp NOT NULL,
    ct_amt numeric(14,2) NOT NULL,
    ct_name varchar(100)
);
CREATE TABLE charge (
    ch_tt_id varchar(3) NOT NULL,
    ch_c_tier smallint NOT NULL,
    ch_chrg numeric(10,2) NOT NULL
);
CREATE TABLE commission_rate (
    cr_c_tier smallint NOT NULL,
    cr_tt_id varchar(3) NOT NULL,
    cr_ex_id varchar(6) NOT NULL,
    cr_from_qty int NOT NULL,
    cr_to_qty int NOT NULL,
    cr_rate numeric(5,2) NOT NULL
);
CREATE TABLE settlement (
    se_t_id bigint NOT NULL,
    se_cash_type varchar(40) NOT NULL,
    se_cash_due_date date NOT NULL,
    se_amt numeric(14,2) NOT NULL
);
CREATE TABLE trade (
    t_id bigint NOT NULL,
    t_dts timestamp NOT NULL,
    t_st_id varchar(4) NOT NULL,
    t_tt_id varchar(3) NOT NULL,
    t_is_cash boolean NOT NULL,
    t_s_symb varchar(15) NOT NULL,
    t_qty int NOT NULL,
    t_bid_price numeric(12,2) NOT NULL,
    t_ca_id bigint NOT NULL,
    t_exec_name varchar(49) NOT NULL,
    t_trade_price numeric(12,2),
    t_chrg numeric(10,2) NOT NULL,
    t_comm numeric(14,2) NOT NULL,
    t_tax numeric(14,2) NOT NULL,
    t_lifo boolean NOT NULL
);
CREATE TABLE trade_history (
    th_t_id bigint NOT NULL,
    th_dts timestamp NOT NULL,
    th_st_id varchar(4) NOT NULL
);
CREATE TABLE trade_request (
    tr_t_id bigint NOT NULL,
    tr_tt_id varchar(3) NOT NULL,
    tr_s_symb varchar(15) NOT NULL,
    tr_qty int NOT NULL,
    tr_bid_price numeric(12,2) NOT NULL,
    tr_b_id bigint NOT NULL
);
CREATE TABLE trade_type (
    tt_id varchar(3) NOT NULL,
    tt_name varchar(12) NOT NULL,
    tt_is_sell boolean NOT NULL,
    tt_is_mrkt boolean NOT NULL
);

-- Market tables (clause 2.2.7)
CREATE TABLE company (
    co_id bigint NOT NULL,
    co_st_id varchar(4) NOT NULL,
    co_name varchar(60) NOT NULL,
    co_in_id varchar(2) NOT NULL,
    co_sp_rate varchar(4) NOT NULL,
    co_ceo varchar(46) NOT NULL,
    co_ad_id bigint NOT NULL,
    co_desc varchar(150) NOT NULL,
    co_open_date date NOT NULL
);
CREATE TABLE company_competitor (
    cp_co_id bigint NOT NULL,
    cp_comp_co_id bigint NOT NULL,
    cp_in_id varchar(2) NOT NULL
);
CREATE TABLE daily_market (
    dm_date date NOT NULL,
    dm_s_symb varchar(15) NOT NULL,
    dm_close numeric(12,2) NOT NULL,
    dm_high numeric(12,2) NOT NULL,
    dm_low numeric(12,2) NOT NULL,
    dm_vol bigint NOT NULL
);
CREATE TABLE exchange (
    ex_id varchar(6) NOT NULL,
    ex_name varchar(100) NOT NULL,
    ex_num_symb int NOT NULL,
    ex_open smallint NOT NULL,
    ex_close smallint NOT NULL,
    ex_desc varchar(150),
    ex_ad_id bigint NOT NULL
);
CREATE TABLE financial (
    fi_co_id bigint NOT NULL,
    fi_year smallint NOT NULL,
    fi_qtr smallint NOT NULL,
    fi_qtr_start_date date NOT NULL,
    fi_revenue numeric(17,2) NOT NULL,
    fi_net_earn numeric(17,2) NOT NULL,
    fi_basic_eps numeric(12,2) NOT NULL,
    fi_dilut_eps numeric(12,2) NOT NULL,
    fi_margin numeric(12,2) NOT NULL,
    fi_inventory numeric(17,2) NOT NULL,
    fi_assets numeric(17,2) NOT NULL,
    fi_liability numeric(17,2) NOT NULL,
    fi_out_basic bigint NOT NULL,
    fi_out_dilut bigint NOT NULL
);
CREATE TABLE industry (
    in_id varchar(2) NOT NULL,
    in_name varchar(50) NOT NULL,
    in_sc_id varchar(2) NOT NULL
);
CREATE TABLE last_trade (
    lt_s_symb varchar(15) NOT NULL,
    lt_dts timestamp NOT NULL,
    lt_price numeric(12,2) NOT NULL,
    lt_open_price numeric(12,2) NOT NULL,
    lt_vol bigint NOT NULL
);
CREATE TABLE news_item (
    ni_id bigint NOT NULL,
    ni_headline varchar(80) NOT NULL,
    ni_summary varchar(255) NOT NULL,
    ni_item text NOT NULL,
    ni_dts timestamp NOT NULL,
    ni_source varchar(30) NOT NULL,
    ni_author varchar(30)
);
CREATE TABLE news_xref (
    nx_ni_id bigint NOT NULL,
    nx_co_id bigint NOT NULL
);
CREATE TABLE sector (
    sc_id varchar(2) NOT NULL,
    sc_name varchar(30) NOT NULL
);
CREATE TABLE security (
    s_symb varchar(15) NOT NULL,
    s_issue varchar(6) NOT NULL,
    s_st_id varchar(4) NOT NULL,
    s_name varchar(70) NOT NULL,
    s_ex_id varchar(6) NOT NULL,
    s_co_id bigint NOT NULL,
    s_num_out bigint NOT NULL,
    s_start_date date NOT NULL,
    s_exch_date date NOT NULL,
    s_pe numeric(10,2) NOT NULL,
    s_52wk_high numeric(12,2) NOT NULL,
    s_52wk_high_date date NOT NULL,
    s_52wk_low numeric(12,2) NOT NULL,
    s_52wk_low_date date NOT NULL,
    s_dividend numeric(10,2) NOT NULL,
    s_yield numeric(5,2) NOT NULL
);

-- Dimension tables (clause 2.2.8)
CREATE TABLE address (
    ad_id bigint NOT NULL,
    ad_line1 varchar(80),
    ad_line2 varchar(80),
    ad_zc_code varchar(12) NOT NULL,
    ad_ctry varchar(80)
);
CREATE TABLE status_type (
    st_id varchar(4) NOT NULL,
    st_name varchar(10) NOT NULL
);
CREATE TABLE taxrate (
    tx_id varchar(4) NOT NULL,
    tx_name varchar(50) NOT NULL,
    tx_rate numeric(6,5) NOT NULL
);
CREATE TABLE zip_code (
    zc_code varchar(12) NOT NULL,
    zc_town varchar(80) NOT NULL,
    zc_div varchar(80) NOT NULL
);

-- @indexes: one statement per line, run over the loader's sessions in parallel
ALTER TABLE account_permission ADD PRIMARY KEY (ap_ca_id, ap_tax_id);
ALTER TABLE customer ADD PRIMARY KEY (c_id);
CREATE UNIQUE INDEX customer_tax_id ON customer (c_tax_id);
ALTER TABLE customer_account ADD PRIMARY KEY (ca_id);
CREATE INDEX customer_account_c_id ON customer_account (ca_c_id);
ALTER TABLE customer_taxrate ADD PRIMARY KEY (cx_c_id, cx_tx_id);
ALTER TABLE holding ADD PRIMARY KEY (h_t_id);
CREATE INDEX holding_ca_symb ON holding (h_ca_id, h_s_symb, h_dts);
ALTER TABLE holding_history ADD PRIMARY KEY (hh_h_t_id, hh_t_id);
CREATE INDEX holding_history_t_id ON holding_history (hh_t_id);
ALTER TABLE holding_summary ADD PRIMARY KEY (hs_ca_id, hs_s_symb);
ALTER TABLE watch_item ADD PRIMARY KEY (wi_wl_id, wi_s_symb);
ALTER TABLE watch_list ADD PRIMARY KEY (wl_id);
CREATE INDEX watch_list_c_id ON watch_list (wl_c_id);
ALTER TABLE broker ADD PRIMARY KEY (b_id);
CREATE INDEX broker_name ON broker (b_name);
ALTER TABLE cash_transaction ADD PRIMARY KEY (ct_t_id);
ALTER TABLE charge ADD PRIMARY KEY (ch_tt_id, ch_c_tier);
ALTER TABLE commission_rate ADD PRIMARY KEY (cr_c_tier, cr_tt_id, cr_ex_id, cr_from_qty);
ALTER TABLE settlement ADD PRIMARY KEY (se_t_id);
ALTER TABLE trade ADD PRIMARY KEY (t_id);
CREATE INDEX trade_ca_dts ON trade (t_ca_id, t_dts);
CREATE INDEX trade_symb_dts ON trade (t_s_symb, t_dts);
CREATE INDEX trade_st_id ON trade (t_st_id);
ALTER TABLE trade_history ADD PRIMARY KEY (th_t_id, th_st_id);
ALTER TABLE trade_request ADD PRIMARY KEY (tr_t_id);
CREATE INDEX trade_request_symb ON trade_request (tr_s_symb);
CREATE INDEX trade_request_b_id ON trade_request (tr_b_id);
ALTER TABLE trade_type ADD PRIMARY KEY (tt_id);
ALTER TABLE company ADD PRIMARY KEY (co_id);
CREATE INDEX company_name ON company (co_name);
CREATE INDEX company_in_id ON company (co_in_id);
ALTER TABLE company_competitor ADD PRIMARY KEY (cp_co_id, cp_comp_co_id, cp_in_id);
ALTER TABLE daily_market ADD PRIMARY KEY (dm_s_symb, dm_date);
ALTER TABLE exchange ADD PRIMARY KEY (ex_id);
ALTER TABLE financial ADD PRIMARY KEY (fi_co_id, fi_year, fi_qtr);
ALTER TABLE industry ADD PRIMARY KEY (in_id);
CREATE INDEX industry_sc_id ON industry (in_sc_id);
ALTER TABLE last_trade ADD PRIMARY KEY (lt_s_symb);
ALTER TABLE news_item ADD PRIMARY KEY (ni_id);
ALTER TABLE news_xref ADD PRIMARY KEY (nx_ni_id, nx_co_id);
CREATE INDEX news_xref_co_id ON news_xref (nx_co_id);
ALTER TABLE sector ADD PRIMARY KEY (sc_id);
CREATE UNIQUE INDEX sector_name ON sector (sc_name);
ALTER TABLE security ADD PRIMARY KEY (s_symb);
CREATE INDEX security_co_issue ON security (s_co_id, s_issue);
ALTER TABLE address ADD PRIMARY KEY (ad_id);
ALTER TABLE status_type ADD PRIMARY KEY (st_id);
ALTER TABLE taxrate ADD PRIMARY KEY (tx_id);
ALTER TABLE zip_code ADD PRIMARY KEY (zc_code);
