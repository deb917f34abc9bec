//! A small RFC 4180 reader for the CSV files tidebench writes (fields quoted only when needed).

pub use crate::results::csv::split_line;

/// Rows as maps from header name to value.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn parse(text: &str) -> Result<Table, String> {
        let mut lines = text.lines();
        let header = split_line(lines.next().ok_or("the file is empty")?);
        let mut rows = Vec::new();
        for (i, line) in lines.enumerate() {
            if line.is_empty() {
                continue;
            }
            let row = split_line(line);
            if row.len() != header.len() {
                return Err(format!(
                    "line {} has {} fields, the header {}",
                    i + 2,
                    row.len(),
                    header.len()
                ));
            }
            rows.push(row);
        }
        Ok(Table { header, rows })
    }

    /// Index of a column, or an error naming it.
    pub fn column(&self, name: &str) -> Result<usize, String> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column '{name}'"))
    }
}
