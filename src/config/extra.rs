//! Keys of a run file that are not the run's own: a workload's options (`procedures = true`
//! at the top or in a `[[group]]`). Serde reads the run's own keys; this module finds the
//! others with their line, hands the ones some workload declares to validation, and refuses
//! the rest as unknown, so a typo still gets a `file:line` error as `deny_unknown_fields` gave.

use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::catalog::{Catalog, OptionKind, OptionValues};
use super::groups::Source;
use super::ConfigError;

/// A key outside a struct's own fields, with its value and where it stands.
struct ExtraKey {
    key: String,
    value: toml::Value,
    span: Range<usize>,
}

/// The workload options found at the top of a run file and in each `[[group]]`, in file order.
#[derive(Debug, Default)]
pub struct ExtraOptions {
    pub top: OptionValues,
    pub groups: Vec<OptionValues>,
}

/// Reads the keys of `src` that are not fields of `Top` (top level) or `Group` (each
/// `[[group]]` table). Keys some workload of `catalog` declares become options; others are
/// errors naming their line.
pub fn workload_options<'de, Top: Deserialize<'de>, Group: Deserialize<'de>>(
    src: &Source,
    catalog: &dyn Catalog,
) -> Result<ExtraOptions, ConfigError> {
    if src.text.trim().is_empty() {
        return Ok(ExtraOptions::default());
    }
    let doc: toml_edit::ImDocument<&str> =
        toml_edit::ImDocument::parse(src.text).map_err(|e| ConfigError::Toml {
            file: src.file.to_string(),
            message: e.to_string(),
        })?;
    let values: toml::Table = toml::from_str(src.text).map_err(|e| ConfigError::Toml {
        file: src.file.to_string(),
        message: e.message().to_string(),
    })?;
    let mut out = ExtraOptions {
        top: options_of(
            src,
            catalog,
            extras(doc.as_table(), &values, fields_of::<Top>()),
        )?,
        groups: Vec::new(),
    };
    let group_values = values.get("group").and_then(|g| g.as_array());
    if let (Some(tables), Some(group_values)) = (
        doc.as_table()
            .get("group")
            .and_then(|g| g.as_array_of_tables()),
        group_values,
    ) {
        for (table, value) in tables.iter().zip(group_values) {
            let empty = toml::Table::new();
            let value = value.as_table().unwrap_or(&empty);
            out.groups.push(options_of(
                src,
                catalog,
                extras(table, value, fields_of::<Group>()),
            )?);
        }
    }
    Ok(out)
}

fn options_of(
    src: &Source,
    catalog: &dyn Catalog,
    keys: Vec<ExtraKey>,
) -> Result<OptionValues, ConfigError> {
    let mut out = OptionValues::new();
    for k in keys {
        if catalog.option_spec(&k.key).is_none() {
            return Err(src.error(
                k.span,
                format!(
                    "unknown key `{}`; see `tidebench run --help` for the keys a run file takes",
                    k.key
                ),
            ));
        }
        let value = match catalog.option_spec(&k.key).map(|o| o.kind) {
            Some(OptionKind::Entries { paths: true, .. }) => relative_to_file(src.file, k.value),
            _ => k.value,
        };
        out.insert(k.key, value);
    }
    Ok(out)
}

/// Entries that start with a relative path (or tables whose `file` is one), made relative to
/// the run file's folder: a run file names its scripts as it sees them, wherever tidebench is
/// started.
fn relative_to_file(file: &str, value: toml::Value) -> toml::Value {
    let dir = std::path::Path::new(file)
        .parent()
        .filter(|d| !d.as_os_str().is_empty());
    let Some(dir) = dir else {
        return value;
    };
    let rebase = |s: String| {
        if s.starts_with('/') {
            s
        } else {
            dir.join(&s).display().to_string()
        }
    };
    match value {
        toml::Value::Array(items) => toml::Value::Array(
            items
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => toml::Value::String(rebase(s)),
                    toml::Value::Table(mut t) => {
                        if let Some(toml::Value::String(f)) = t.remove("file") {
                            t.insert("file".into(), toml::Value::String(rebase(f)));
                        }
                        toml::Value::Table(t)
                    }
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}

fn extras(table: &toml_edit::Table, values: &toml::Table, fields: &[&str]) -> Vec<ExtraKey> {
    table
        .iter()
        .filter(|(k, _)| !fields.contains(k))
        .filter_map(|(k, _)| {
            let (key, _) = table.get_key_value(k)?;
            Some(ExtraKey {
                key: k.to_string(),
                value: values.get(k)?.clone(),
                span: key.span().unwrap_or(0..0),
            })
        })
        .collect()
}

/// The field names serde gives for `T` (a struct deriving `Deserialize`): the struct's
/// deserializer is asked for them and the answer is caught before anything is read.
pub fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Ask;
    #[derive(Debug)]
    struct Fields(&'static [&'static str]);
    impl std::fmt::Display for Fields {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("fields")
        }
    }
    impl std::error::Error for Fields {}
    impl de::Error for Fields {
        fn custom<M: std::fmt::Display>(_: M) -> Fields {
            Fields(&[])
        }
    }
    impl<'de> Deserializer<'de> for Ask {
        type Error = Fields;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Fields> {
            Err(Fields(&[]))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Fields> {
            Err(Fields(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    match T::deserialize(Ask) {
        Err(Fields(f)) => f,
        Ok(_) => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Two {
        a: u32,
        b_c: Option<String>,
    }

    #[test]
    fn fields_are_read_from_the_derive() {
        assert_eq!(fields_of::<Two>(), &["a", "b_c"]);
    }
}
