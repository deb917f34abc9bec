//! A small RFC 4180 reader for the CSV files tidebench writes (fields quoted only when needed).

/// Splits one line into fields, undoing quoting.
pub fn split_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undoes_quoting() {
        assert_eq!(
            split_line("a,\"b,c\",\"d\"\"e\","),
            vec!["a", "b,c", "d\"e", ""]
        );
    }
}
