//! Just enough YAML to write Kubernetes manifests a reader can follow: keys in the order written
//! (serde_json's map sorts them), comments where they explain, every string quoted or in a
//! literal block, so no value is ever read back as another type (`no`, `1e3`, `0755`).

/// A value in a manifest.
#[derive(Debug, Clone)]
pub enum Node {
    Str(String),
    Int(i64),
    Bool(bool),
    Map(Vec<Entry>),
    Seq(Vec<Node>),
}

/// A key of a map, its value, and the comment lines written above it.
#[derive(Debug, Clone)]
pub struct Entry {
    key: &'static str,
    value: Node,
    comment: String,
}

/// `key: value`.
pub fn entry(key: &'static str, value: impl Into<Node>) -> Entry {
    Entry {
        key,
        value: value.into(),
        comment: String::new(),
    }
}

impl Entry {
    /// The same entry with `# text` above it, one comment line per line of `text`.
    pub fn comment(mut self, text: &str) -> Entry {
        self.comment = text.to_string();
        self
    }
}

impl From<&str> for Node {
    fn from(s: &str) -> Node {
        Node::Str(s.to_string())
    }
}
impl From<String> for Node {
    fn from(s: String) -> Node {
        Node::Str(s)
    }
}
impl From<i64> for Node {
    fn from(n: i64) -> Node {
        Node::Int(n)
    }
}
impl From<u32> for Node {
    fn from(n: u32) -> Node {
        Node::Int(i64::from(n))
    }
}
impl From<bool> for Node {
    fn from(b: bool) -> Node {
        Node::Bool(b)
    }
}
impl From<Vec<Entry>> for Node {
    fn from(entries: Vec<Entry>) -> Node {
        Node::Map(entries)
    }
}
impl From<Vec<Node>> for Node {
    fn from(items: Vec<Node>) -> Node {
        Node::Seq(items)
    }
}
impl From<Vec<String>> for Node {
    fn from(items: Vec<String>) -> Node {
        Node::Seq(items.into_iter().map(Node::Str).collect())
    }
}

/// Documents (each a map) as one stream, `---` between them, under a comment.
pub fn stream(header: &str, docs: &[Vec<Entry>]) -> String {
    let mut out = String::new();
    comment(&mut out, header, 0);
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        map(&mut out, doc, 0);
    }
    out
}

/// Writes `# line` for each line of `text` at column `ind`.
fn comment(out: &mut String, text: &str, ind: usize) {
    for line in text.lines() {
        let sep = if line.is_empty() { "" } else { " " };
        out.push_str(&format!("{:ind$}#{sep}{line}\n", ""));
    }
}

/// Writes the map's entries at column `ind`.
fn map(out: &mut String, entries: &[Entry], ind: usize) {
    for e in entries {
        comment(out, &e.comment, ind);
        out.push_str(&format!("{:ind$}{}:", "", e.key));
        value(out, &e.value, ind);
    }
}

/// Writes a value after `key:` or `-` standing at column `ind`.
fn value(out: &mut String, node: &Node, ind: usize) {
    match node {
        Node::Map(entries) if entries.is_empty() => out.push_str(" {}\n"),
        Node::Seq(items) if items.is_empty() => out.push_str(" []\n"),
        Node::Map(entries) => {
            out.push('\n');
            map(out, entries, ind + 2);
        }
        Node::Seq(items) => {
            out.push('\n');
            for item in items {
                out.push_str(&format!("{:w$}-", "", w = ind + 2));
                match item {
                    // `- key: v` with the map's other keys under the first: write the map at
                    // its column, then put the dash where the first key's indent was.
                    Node::Map(entries) if !entries.is_empty() => {
                        let mut inner = String::new();
                        map(&mut inner, entries, ind + 4);
                        out.push_str(&inner[ind + 3..]);
                    }
                    _ => value(out, item, ind + 2),
                }
            }
        }
        Node::Int(n) => out.push_str(&format!(" {n}\n")),
        Node::Bool(b) => out.push_str(&format!(" {b}\n")),
        Node::Str(s) if block_safe(s) => block(out, s, ind),
        Node::Str(s) => out.push_str(&format!(" {}\n", quoted(s))),
    }
}

/// A literal block (`|`) for text of several lines (a script, a file), at column `ind + 2`.
/// The indentation indicator is always given, so a first line starting with blanks is read
/// right; the chomping indicator keeps exactly the text's final newlines.
fn block(out: &mut String, s: &str, ind: usize) {
    let body = s.trim_end_matches('\n');
    let chomp = match s.len() - body.len() {
        0 => "-",
        1 => "",
        _ => "+",
    };
    out.push_str(&format!(" |2{chomp}\n"));
    for line in body.split('\n') {
        if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("{:w$}{line}\n", "", w = ind + 2));
        }
    }
    for _ in 1..(s.len() - body.len()) {
        out.push('\n');
    }
}

/// Whether `s` reads back the same from a literal block: several lines, some not blank, and
/// nothing a block cannot hold (a carriage return, control and other non-printable
/// characters; YAML 1.1's other line breaks; a byte-order mark). Lines ending in a blank go
/// quoted too: YAML keeps the blank, but editors and diff tools drop it unseen.
fn block_safe(s: &str) -> bool {
    let body = s.trim_end_matches('\n');
    body.contains('\n')
        && body.split('\n').any(|l| !l.trim().is_empty())
        && !body.split('\n').any(|l| l.ends_with([' ', '\t']))
        && s.chars().all(|c| c == '\n' || printable(c))
}

/// In double quotes with YAML's escapes (JSON's are a subset): `"` and `\` escaped, and every
/// character YAML does not print as itself.
fn quoted(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            c if printable(c) => q.push(c),
            c if (c as u32) <= 0xFF => q.push_str(&format!("\\x{:02X}", c as u32)),
            c if (c as u32) <= 0xFFFF => q.push_str(&format!("\\u{:04X}", c as u32)),
            c => q.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    q.push('"');
    q
}

/// YAML's printable set less the characters YAML 1.1 reads as line breaks and the byte-order
/// mark, so a 1.1 reader (libyaml, and through it many tools) reads the same text.
fn printable(c: char) -> bool {
    matches!(c as u32, 0x09 | 0x20..=0x7E | 0xA0..=0x2027 | 0x202A..=0xD7FF | 0xE000..=0xFEFE
        | 0xFF00..=0xFFFD | 0x10000..=0x10FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<serde_yaml::Value> {
        serde_yaml::Deserializer::from_str(text)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect()
    }

    #[test]
    fn every_string_reads_back_as_the_same_string() {
        let tricky = [
            "",
            "no",
            "yes",
            "null",
            "~",
            "1e3",
            "0755",
            "true",
            "- a",
            "a: b",
            "#x",
            "'",
            "\"",
            "\\",
            "a\tb",
            "x\r\ny",
            "\u{7}",
            "\u{85}",
            "\u{2028}",
            "\u{feff}",
            "\u{7f}",
            "é",
            "\u{1F600}",
            "one\ntwo\n",
            "  lead\nsecond",
            "a\n\n\nb\n\n",
            "tail \nx",
            "\n\n",
            "x\n",
            "sh -c 'until [ -f a ]; do sleep 5; done'\nexec tidebench\n",
        ];
        let items: Vec<Node> = tricky.iter().map(|s| Node::from(*s)).collect();
        let doc = vec![
            entry("list", items.clone()),
            entry(
                "maps",
                vec![Node::Map(vec![entry("k", items), entry("s", tricky[25])])],
            ),
        ];
        let text = stream("", &[doc]);
        let back = &read(&text)[0];
        for (i, want) in tricky.iter().enumerate() {
            assert_eq!(back["list"][i].as_str(), Some(*want), "{want:?} in\n{text}");
            assert_eq!(
                back["maps"][0]["k"][i].as_str(),
                Some(*want),
                "{want:?} in\n{text}"
            );
        }
        assert_eq!(back["maps"][0]["s"].as_str(), Some(tricky[25]));
    }

    #[test]
    fn maps_keep_their_order_and_comments_and_documents_are_separated() {
        let doc = |n: i64| {
            vec![
                entry("kind", "Job").comment("first line\n\nthird"),
                entry(
                    "spec",
                    vec![
                        entry("n", n),
                        entry("on", true),
                        entry("e", Vec::<Node>::new()),
                        entry(
                            "items",
                            vec![Node::Map(vec![
                                entry("a", "x").comment("on the first key of an item"),
                                entry("b", vec![Node::Map(vec![entry("c", 1i64)])]),
                            ])],
                        ),
                    ],
                ),
                entry("empty", Vec::<Entry>::new()),
            ]
        };
        let text = stream("top", &[doc(1), doc(2)]);
        assert!(text.starts_with("# top\n# first line\n#\n# third\nkind: \"Job\"\nspec:\n  n: 1\n"));
        let docs = read(&text);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["spec"]["n"].as_i64(), Some(2));
        assert_eq!(docs[1]["spec"]["on"].as_bool(), Some(true));
        assert!(docs[1]["spec"]["e"].as_sequence().unwrap().is_empty());
        assert!(docs[1]["empty"].as_mapping().unwrap().is_empty());
        let item = &docs[1]["spec"]["items"][0];
        assert_eq!(
            (item["a"].as_str(), item["b"][0]["c"].as_i64()),
            (Some("x"), Some(1))
        );
        assert!(
            text.contains("    - # on the first key of an item\n      a: \"x\"\n"),
            "{text}"
        );
    }
}
