//! NEWS_ITEM and NEWS_XREF: two news items per company (tpce.md §2.3), each cross-referenced
//! to its company once. The text is made from our own sentence patterns filled with the
//! company's name, industry and drawn figures.
//!
//! NI_ITEM may hold up to 100,000 characters in TPC-E; ours is 400–1,000 characters. Security-
//! Detail reads the body in only 1 % of calls (tpce.md §3.2), so a long body would cost load
//! time and disk for little benefit; a few hundred characters still make the item a real
//! out-of-line value that the 1 % path has to fetch.

use super::catalog::industry;
use super::clock::{MarketMs, TRADE_DAY_MS};
use super::market_company::company_industry;
use super::{ids, Batch, Table};
use crate::workload::tpce::names::{company_name, first_name, last_name, Gender};
use crate::workload::tpce::rng::{Entity, Tag};

/// The body's length bounds, in characters.
pub const BODY_CHARS: (usize, usize) = (400, 1_000);
/// News dates fall in the year of trading days before the initial trades.
const NEWS_DAYS: i64 = 260;

const SOURCES: [&str; 8] = [
    "Harbor Street Wire",
    "The Ledger Daily",
    "Market Lantern",
    "Quarterly Observer",
    "Ticker & Tape",
    "North Bank Review",
    "The Trading Post",
    "Capital Morning",
];

/// Fields of the news stream (keyed by NI_ID). 0–7 are the author's name.
const F_AUTHOR_GENDER: u32 = 20;
const F_AUTHOR_NULL: u32 = 21;
const F_SOURCE: u32 = 22;
const F_STORY: u32 = 23;
const F_FIGURE: u32 = 24; // and the next two
const F_DAY: u32 = 30;
const F_TIME: u32 = 31;
const F_BODY_TARGET: u32 = 32;
const F_SENTENCE: u32 = 100; // one per sentence

/// What a story is about: a headline pattern and a summary pattern. `{co}` is the company,
/// `{ind}` its industry, `{a}` (2–40), `{b}` (2–12) and `{c}` (50–900) drawn figures.
const STORIES: [(&str, &str); 6] = [
    (
        "{co} reports quarterly revenue up {a}%",
        "{co} said revenue rose {a}% from a year earlier, helped by demand for its {ind}; \
         margins widened by {c} basis points.",
    ),
    (
        "{co} names new chief financial officer",
        "{co} appointed a new chief financial officer after a search of {b} months; the \
         {ind} group expects no change to its guidance.",
    ),
    (
        "{co} expands into {a} new markets",
        "{co} will enter {a} new markets over the next {b} quarters, adding about {c} jobs \
         to its {ind} business.",
    ),
    (
        "{co} wins ${c} million supply contract",
        "{co} won a {b}-year contract worth ${c} million, its largest in {ind} this year; \
         deliveries begin within {a} weeks.",
    ),
    (
        "{co} announces ${c} million share buyback",
        "The board of {co} approved buying back up to ${c} million of shares over {b} \
         months, citing steady cash flow from {ind}.",
    ),
    (
        "Analysts lift price targets for {co}",
        "{b} analysts raised their price targets for {co} after a survey of {ind} buyers \
         found orders up {a}% and inventories down {b}%.",
    ),
];

/// Sentences of the body, filled like the stories.
const SENTENCES: [&str; 10] = [
    "Shares of {co} traded on heavy volume as investors weighed the outlook for {ind}.",
    "The company said it had {a} projects under way and expected {b} more by year end.",
    "Executives told analysts on a call that costs rose {a}% while prices held steady.",
    "Competitors in {ind} have reported mixed results over the past {b} quarters.",
    "{co} employs about {c} people and sells in {a} countries.",
    "A spokesperson declined to comment on reports of talks with a rival.",
    "Orders placed in the last {b} weeks were {a}% above the same period a year ago.",
    "The results come after {co} cut {c} jobs and closed {a} sites last year.",
    "Analysts said demand for {ind} tends to follow business spending with a lag.",
    "The company repeated its forecast and said it would report again in {b} weeks.",
];

/// One news item's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewsItem {
    pub headline: String,
    pub summary: String,
    pub body: String,
    pub dts: MarketMs,
    pub source: &'static str,
    pub author: Option<String>,
}

/// Fills a pattern's placeholders.
fn fill(pattern: &str, co: &str, ind: &str, figures: [i64; 3]) -> String {
    pattern
        .replace("{co}", co)
        .replace("{ind}", ind)
        .replace("{a}", &figures[0].to_string())
        .replace("{b}", &figures[1].to_string())
        .replace("{c}", &figures[2].to_string())
}

/// The author's byline, at most 30 characters (NI_AUTHOR); `None` for 10 % of items.
fn author(e: &Entity) -> Option<String> {
    if e.chance(F_AUTHOR_NULL, 10) {
        return None;
    }
    let gender = if e.chance(F_AUTHOR_GENDER, 50) {
        Gender::Female
    } else {
        Gender::Male
    };
    let (first, last) = (first_name(e, gender), last_name(e));
    let full = format!("{first} {last}");
    Some(if full.len() <= 30 {
        full
    } else {
        format!("{}. {last}", &first[..1])
    })
}

/// News item `ni_id` of company `co_id` (one of [`ids::news_of`]).
pub fn news_item(seed: u64, co_id: u64, ni_id: u64) -> NewsItem {
    let e = Entity::new(seed, Tag::News, ni_id);
    let co = company_name(seed, co_id);
    let ind = industry(company_industry(seed, co_id)).1.to_lowercase();
    let figures = [
        e.range(F_FIGURE, 2, 40),
        e.range(F_FIGURE + 1, 2, 12),
        e.range(F_FIGURE + 2, 50, 900),
    ];
    let (headline, summary) = STORIES[e.range(F_STORY, 0, STORIES.len() as i64 - 1) as usize];
    let target = e.range(F_BODY_TARGET, BODY_CHARS.0 as i64, BODY_CHARS.1 as i64) as usize;
    let mut body = fill(summary, &co, &ind, figures);
    let mut k = 0;
    while body.len() < target {
        let s = SENTENCES[e.range(F_SENTENCE + k, 0, SENTENCES.len() as i64 - 1) as usize];
        let f = [
            e.range(F_SENTENCE + k + 1_000, 2, 40),
            e.range(F_SENTENCE + k + 2_000, 2, 12),
            e.range(F_SENTENCE + k + 3_000, 50, 900),
        ];
        let sentence = fill(s, &co, &ind, f);
        if body.len() + 1 + sentence.len() > BODY_CHARS.1 {
            break;
        }
        body.push(' ');
        body.push_str(&sentence);
        k += 1;
    }
    let day = e.range(F_DAY, -NEWS_DAYS, -1);
    NewsItem {
        headline: fill(headline, &co, &ind, figures),
        summary: fill(summary, &co, &ind, figures),
        body,
        dts: MarketMs(day * TRADE_DAY_MS + e.range(F_TIME, 0, TRADE_DAY_MS - 1)),
        source: e.pick(F_SOURCE, &SOURCES).copied().unwrap_or(SOURCES[0]),
        author: author(&e),
    }
}

/// Writes company `co_id`'s NEWS_ITEM and NEWS_XREF rows.
pub(super) fn write_news(b: &mut Batch, seed: u64, co_id: u64) {
    for ni_id in ids::news_of(co_id) {
        let n = news_item(seed, co_id, ni_id);
        b.row(Table::NewsItem)
            .int(ni_id as i64)
            .text(&n.headline)
            .text(&n.summary)
            .text(&n.body)
            .ts(n.dts)
            .text(n.source)
            .opt_text(n.author.as_deref())
            .end();
        b.row(Table::NewsXref)
            .int(ni_id as i64)
            .int(co_id as i64)
            .end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_fits_its_columns_and_names_its_company() {
        let mut authors = 0;
        for co in (1..=500).chain([4_096_001]) {
            let name = company_name(5, co);
            for ni in ids::news_of(co) {
                let n = news_item(5, co, ni);
                assert!(n.headline.len() <= 80, "{}", n.headline);
                assert!(n.summary.len() <= 255, "{}", n.summary);
                let len = n.body.len();
                assert!((BODY_CHARS.0..=BODY_CHARS.1).contains(&len), "{len}");
                assert!(n.headline.contains(&name) && n.body.contains(&name));
                assert!(!n.body.contains('{'), "{}", n.body);
                assert!(n.source.len() <= 30);
                if let Some(a) = &n.author {
                    assert!(a.len() <= 30, "{a}");
                    authors += 1;
                }
                // Dated in 2004, before the initial trades.
                let (y, _, _) = n.dts.date().ymd();
                assert_eq!(y, 2004, "{}", n.dts.text());
            }
        }
        assert!((850..=950).contains(&authors), "{authors}");
        assert_eq!(news_item(5, 3, 5), news_item(5, 3, 5));
        assert_ne!(news_item(5, 3, 5).body, news_item(5, 3, 6).body);
    }

    #[test]
    fn each_item_has_one_cross_reference() {
        let mut b = Batch::new();
        write_news(&mut b, 1, 9);
        super::super::assert_rows_fit_schema(&b);
        assert_eq!(b.text(Table::NewsXref), "17\t9\n18\t9\n");
        assert_eq!(b.text(Table::NewsItem).lines().count(), 2);
    }
}
