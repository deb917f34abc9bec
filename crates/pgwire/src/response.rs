//! What the server answers to one round trip, from the first message after our write to
//! ReadyForQuery, and the [`QueryResult`] view of it.
//!
//! Kept apart from the socket so it can be fed canned messages in tests. Row data is copied into
//! one reused buffer with (offset, length) cells, so a statement in steady state allocates
//! nothing and a `QueryResult` can lend `&str`s without owning anything.

use bytes::{Buf, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{Message, ParameterStatusBody};

use crate::Error;

/// Transaction status from the last ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStatus {
    Idle,
    InTransaction,
    Failed,
}

/// A cell's place in `Response::data`; `start == NULL` marks SQL NULL.
#[derive(Clone, Copy)]
struct Cell {
    start: usize,
    len: usize,
}

const NULL: usize = usize::MAX;

/// Whether a message ended the response.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    More,
    Ready(TxStatus),
}

#[derive(Default)]
pub(crate) struct Response {
    /// DataRow bodies, copied whole (one memcpy per row).
    data: Vec<u8>,
    cells: Vec<Cell>,
    /// Index in `cells` of each row's first cell.
    rows: Vec<usize>,
    affected: u64,
    /// One entry per RowDescription (a query that returns rows): the index of its first row
    /// and its column names' spans in `names`. Kept for `\gset`-style readers; a benchmark's
    /// statements that send no Describe never fill it.
    sets: Vec<ResultSet>,
    names: Vec<u8>,
    name_spans: Vec<(usize, usize)>,
    /// ParseCompletes that arrived: each a statement sent with Parse now exists on the server
    /// (in a pipeline, the first that many Parses of the part up to this Sync).
    pub(crate) parses: u32,
    /// The first ErrorResponse; later ones (there are none before Sync in practice) add nothing.
    pub(crate) error: Option<Error>,
    /// The server's notices, each as libpq's default notice processor prints it (rare: a
    /// statement's response holds none in a benchmark's steady state).
    notices: Vec<String>,
}

impl Response {
    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.cells.clear();
        self.rows.clear();
        self.affected = 0;
        self.sets.clear();
        self.names.clear();
        self.name_spans.clear();
        self.parses = 0;
        self.error = None;
        self.notices.clear();
    }

    /// Takes the next whole message of a statement's response from `buf`, if one is there:
    /// the hot types straight from the buffer ([`Response::on_frame`]), the others parsed
    /// ([`Response::on_message`]), with a ParameterStatus handed to `on_param`. `None`: more
    /// bytes are needed. An `Err` means the session cannot continue.
    pub(crate) fn take_from(
        &mut self,
        buf: &mut BytesMut,
        on_param: impl FnOnce(&ParameterStatusBody) -> Result<(), Error>,
    ) -> Result<Option<Step>, Error> {
        let Some((tag, len)) = frame(buf)? else {
            return Ok(None);
        };
        if let Some(step) = self.on_frame(tag, &buf[5..len]) {
            buf.advance(len);
            return step.map(Some);
        }
        match Message::parse(buf) {
            Ok(Some(Message::ParameterStatus(body))) => on_param(&body).map(|()| Some(Step::More)),
            Ok(Some(message)) => self.on_message(message).map(Some),
            // `frame` saw the whole message, so the parser has it all.
            Ok(None) => Ok(None),
            Err(e) => Err(Error::protocol(format!("malformed message: {e}"))),
        }
    }

    /// Takes one backend message that [`Response::on_frame`] does not. An `Err` means the
    /// session cannot continue (the message is not allowed here); server errors are kept in
    /// `self.error`.
    fn on_message(&mut self, message: Message) -> Result<Step, Error> {
        match message {
            Message::ErrorResponse(body) if self.error.is_none() => {
                self.error = Some(Error::from_fields(&body));
            }
            Message::NoticeResponse(body) => self.notices.push(notice_text(body.fields())),
            Message::CopyInResponse(_) => {
                return Err(Error::protocol(
                    "the server waits for COPY data, which pgwire does not send; \
                     run COPY FROM STDIN through tokio-postgres",
                ))
            }
            // Everything else carries nothing a benchmark reads: later errors (the first one
            // explains the failure), NOTIFY, COPY TO STDOUT data.
            _ => {}
        }
        Ok(Step::More)
    }

    /// Takes one message of a statement's response straight from the read buffer, for the
    /// types a benchmark's statements answer with (`tag` and the body after the length); `None`
    /// for the others, which go through [`Response::on_message`]. This is the hot path: no
    /// `Message` is built, so the read buffer is never split into shared pieces.
    fn on_frame(&mut self, tag: u8, body: &[u8]) -> Option<Result<Step, Error>> {
        let step = match tag {
            b'D' => self.push_row_bytes(body).map(|()| Step::More),
            b'C' => match body.split_last() {
                Some((0, tag)) => {
                    self.affected = affected_from_tag(tag);
                    Ok(Step::More)
                }
                _ => Err(Error::protocol("malformed CommandComplete: no terminator")),
            },
            b'Z' => match body {
                [status] => tx_status(*status).map(Step::Ready),
                _ => Err(Error::protocol("malformed ReadyForQuery")),
            },
            b'1' => {
                self.parses += 1;
                Ok(Step::More)
            }
            b'T' => self.push_description(body).map(|()| Step::More),
            // BindComplete, CloseComplete, NoData, EmptyQueryResponse, PortalSuspended, and the
            // parameter descriptions: nothing to keep.
            b'2' | b'3' | b'n' | b'I' | b's' | b't' => Ok(Step::More),
            _ => return None,
        };
        Some(step)
    }

    /// A DataRow body: the column count (i16), then per column its length (i32, -1 for NULL)
    /// and its bytes. The body is copied whole; cells point into the copy.
    fn push_row_bytes(&mut self, body: &[u8]) -> Result<(), Error> {
        let malformed = || Error::protocol("malformed DataRow");
        let (count, mut rest) = match body {
            [a, b, rest @ ..] => (i16::from_be_bytes([*a, *b]), rest),
            _ => return Err(malformed()),
        };
        let base = self.data.len() + 2;
        self.data.extend_from_slice(body);
        self.rows.push(self.cells.len());
        let mut at = 0;
        for _ in 0..count {
            let [a, b, c, d, tail @ ..] = rest else {
                return Err(malformed());
            };
            let len = i32::from_be_bytes([*a, *b, *c, *d]);
            at += 4;
            if len < 0 {
                self.cells.push(Cell {
                    start: NULL,
                    len: 0,
                });
                rest = tail;
                continue;
            }
            let len = len as usize;
            if tail.len() < len {
                return Err(malformed());
            }
            self.cells.push(Cell {
                start: base + at,
                len,
            });
            at += len;
            rest = &tail[len..];
        }
        Ok(())
    }

    /// A RowDescription body: the field count (i16), then per field its name (NUL-ended) and
    /// 18 bytes of table, column, type, size, modifier and format.
    fn push_description(&mut self, body: &[u8]) -> Result<(), Error> {
        let malformed = || Error::protocol("malformed RowDescription");
        let (count, mut rest) = match body {
            [a, b, rest @ ..] => (u16::from_be_bytes([*a, *b]) as usize, rest),
            _ => return Err(malformed()),
        };
        self.sets.push(ResultSet {
            first_row: self.rows.len(),
            first_name: self.name_spans.len(),
            columns: count,
        });
        for _ in 0..count {
            let nul = rest.iter().position(|&c| c == 0).ok_or_else(malformed)?;
            let start = self.names.len();
            self.names.extend_from_slice(&rest[..nul]);
            self.name_spans.push((start, self.names.len()));
            rest = rest.get(nul + 1 + 18..).ok_or_else(malformed)?;
        }
        Ok(())
    }

    fn cell(&self, row: usize, col: usize) -> Option<Cell> {
        let first = *self.rows.get(row)?;
        let end = self.rows.get(row + 1).copied().unwrap_or(self.cells.len());
        let index = first.checked_add(col).filter(|&i| i < end)?;
        self.cells.get(index).copied()
    }

    fn value(&self, row: usize, col: usize) -> Option<&[u8]> {
        let cell = self.cell(row, col)?;
        if cell.start == NULL {
            return None;
        }
        self.data.get(cell.start..cell.start + cell.len)
    }
}

/// One query's rows within a response (see `Response::sets`).
#[derive(Debug, Clone, Copy)]
struct ResultSet {
    first_row: usize,
    first_name: usize,
    columns: usize,
}

/// The tag and whole length (tag byte included) of the first message in `buf`, once all of
/// it is there.
fn frame(buf: &[u8]) -> Result<Option<(u8, usize)>, Error> {
    let [tag, a, b, c, d, ..] = *buf else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([a, b, c, d]) as usize;
    if len < 4 {
        return Err(Error::protocol(format!(
            "malformed message: length {len} of a {:?} message",
            tag as char
        )));
    }
    Ok((buf.len() > len).then_some((tag, len + 1)))
}

pub(crate) fn tx_status(byte: u8) -> Result<TxStatus, Error> {
    match byte {
        b'I' => Ok(TxStatus::Idle),
        b'T' => Ok(TxStatus::InTransaction),
        b'E' => Ok(TxStatus::Failed),
        other => Err(Error::protocol(format!(
            "ReadyForQuery with unknown transaction status {other:#04x}"
        ))),
    }
}

/// The row count at the end of a command tag (`INSERT 0 5` → 5); 0 for tags without one.
/// Read from the bytes: the tag is ASCII, and this runs for every statement.
fn affected_from_tag(tag: &[u8]) -> u64 {
    let digits = match tag.iter().rposition(|b| *b == b' ') {
        Some(space) => &tag[space + 1..],
        None => tag,
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    digits
        .iter()
        .try_fold(0u64, |n, d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .unwrap_or(0)
}

/// What a statement returned. Row values are kept (text format) until the next statement, so
/// workloads that branch on results (TPC-C) can read them without allocating per row.
///
/// For SQL text holding several statements, rows of all of them are listed in order and
/// `affected` is the last statement's count.
/// A notice's fields as libpq's default notice processor prints them: the severity (as the
/// server localized it) and the message, then the detail and the hint, each on its own line.
fn notice_text(mut fields: postgres_protocol::message::backend::ErrorFields<'_>) -> String {
    let (mut severity, mut message, mut detail, mut hint) =
        (String::new(), String::new(), String::new(), String::new());
    while let Ok(Some(field)) = fields.next() {
        let text = String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            b'S' => severity = text,
            b'M' => message = text,
            b'D' => detail = format!("\nDETAIL:  {text}"),
            b'H' => hint = format!("\nHINT:  {text}"),
            _ => {}
        }
    }
    format!("{severity}:  {message}{detail}{hint}")
}

pub struct QueryResult<'a> {
    pub(crate) response: &'a Response,
}

impl QueryResult<'_> {
    /// The server's notices during the statement, each as libpq prints it by default
    /// (`NOTICE:  MESSAGE`, then `DETAIL:  ...` and `HINT:  ...` lines where given).
    pub fn notices(&self) -> &[String] {
        &self.response.notices
    }

    /// Number of DataRow messages received.
    pub fn rows(&self) -> usize {
        self.response.rows.len()
    }

    /// Column `col` of row `row` as text; None for NULL or out of range.
    pub fn get_str(&self, row: usize, col: usize) -> Option<&str> {
        std::str::from_utf8(self.response.value(row, col)?).ok()
    }

    /// Column parsed as an integer; None for NULL, out of range or not an integer.
    pub fn get_i64(&self, row: usize, col: usize) -> Option<i64> {
        self.get_str(row, col)?.parse().ok()
    }

    /// Column parsed as a float (`numeric`, `float8`, ...); None for NULL, out of range or not
    /// a number.
    pub fn get_f64(&self, row: usize, col: usize) -> Option<f64> {
        self.get_str(row, col)?.parse().ok()
    }

    /// True when the column is SQL NULL (false when out of range).
    pub fn is_null(&self, row: usize, col: usize) -> bool {
        self.response
            .cell(row, col)
            .is_some_and(|cell| cell.start == NULL)
    }

    /// Rows affected from the CommandComplete tag (UPDATE 1 → 1), 0 when the tag has none.
    pub fn affected(&self) -> u64 {
        self.response.affected
    }

    /// How many of the statements returned rows with a description (the simple protocol
    /// always describes; the others only through [`crate::Connection::query`]).
    pub fn result_sets(&self) -> usize {
        self.response.sets.len()
    }

    /// The rows (as indexes for `get_str`) of result set `set`.
    pub fn set_rows(&self, set: usize) -> std::ops::Range<usize> {
        let sets = &self.response.sets;
        let Some(this) = sets.get(set) else {
            return 0..0;
        };
        let end = sets
            .get(set + 1)
            .map_or(self.response.rows.len(), |next| next.first_row);
        this.first_row..end
    }

    /// The column names of result set `set`, in order.
    pub fn set_columns(&self, set: usize) -> impl Iterator<Item = &str> + '_ {
        let (first, count) = self
            .response
            .sets
            .get(set)
            .map_or((0, 0), |s| (s.first_name, s.columns));
        self.response.name_spans[first..first + count]
            .iter()
            .map(|&(a, b)| std::str::from_utf8(&self.response.names[a..b]).unwrap_or("?column?"))
    }
}

#[cfg(test)]
mod tests {
    use bytes::{BufMut, BytesMut};

    use super::*;
    use crate::ErrorKind;

    /// Appends one backend message: tag, length (counting itself), body.
    fn msg(buf: &mut BytesMut, tag: u8, body: &[u8]) {
        buf.put_u8(tag);
        buf.put_i32(4 + body.len() as i32);
        buf.put_slice(body);
    }

    fn data_row(buf: &mut BytesMut, values: &[Option<&str>]) {
        let mut body = BytesMut::new();
        body.put_u16(values.len() as u16);
        for v in values {
            match v {
                Some(s) => {
                    body.put_i32(s.len() as i32);
                    body.put_slice(s.as_bytes());
                }
                None => body.put_i32(-1),
            }
        }
        msg(buf, b'D', &body);
    }

    fn row_description(buf: &mut BytesMut, names: &[&str]) {
        let mut body = BytesMut::new();
        body.put_u16(names.len() as u16);
        for name in names {
            body.put_slice(name.as_bytes());
            body.put_u8(0);
            body.put_u32(0); // table oid
            body.put_i16(0); // column
            body.put_u32(25); // text
            body.put_i16(-1);
            body.put_i32(-1);
            body.put_i16(0);
        }
        msg(buf, b'T', &body);
    }

    fn error_response(buf: &mut BytesMut, severity: &str, code: &str, message: &str) {
        let mut body = BytesMut::new();
        for (t, v) in [
            (b'S', severity),
            (b'V', severity),
            (b'C', code),
            (b'M', message),
        ] {
            body.put_u8(t);
            body.put_slice(v.as_bytes());
            body.put_u8(0);
        }
        body.put_u8(0);
        msg(buf, b'E', &body);
    }

    /// Feeds `bytes` in chunks of `chunk` bytes, as a socket might deliver them, until
    /// ReadyForQuery.
    fn feed(response: &mut Response, bytes: &[u8], chunk: usize) -> Result<TxStatus, Error> {
        response.clear();
        let mut buf = BytesMut::new();
        for piece in bytes.chunks(chunk) {
            buf.extend_from_slice(piece);
            while let Some(step) = response.take_from(&mut buf, |_| Ok(()))? {
                if let Step::Ready(status) = step {
                    assert!(buf.is_empty(), "bytes left after ReadyForQuery");
                    return Ok(status);
                }
            }
        }
        panic!("stream ended before ReadyForQuery");
    }

    #[test]
    fn rows_values_nulls_and_affected_count() {
        let mut bytes = BytesMut::new();
        msg(&mut bytes, b'1', &[]);
        msg(&mut bytes, b'2', &[]);
        row_description(&mut bytes, &["a", "b"]);
        data_row(&mut bytes, &[Some("42"), Some("héllo")]);
        data_row(&mut bytes, &[None, Some("-7")]);
        msg(&mut bytes, b'C', b"SELECT 2\0");
        msg(&mut bytes, b'Z', b"T");
        for chunk in [1, 3, 7, bytes.len()] {
            let mut response = Response::default();
            let status = feed(&mut response, &bytes, chunk).unwrap();
            assert_eq!(status, TxStatus::InTransaction);
            assert_eq!(response.parses, 1);
            assert!(response.error.is_none());
            let result = QueryResult {
                response: &response,
            };
            assert_eq!(result.rows(), 2);
            assert_eq!(result.get_i64(0, 0), Some(42));
            assert_eq!(result.get_str(0, 1), Some("héllo"));
            assert_eq!(result.get_i64(0, 1), None);
            assert_eq!(result.get_str(1, 0), None);
            assert!(result.is_null(1, 0));
            assert!(!result.is_null(1, 1));
            assert_eq!(result.get_i64(1, 1), Some(-7));
            assert_eq!(result.get_str(1, 2), None);
            assert!(!result.is_null(0, usize::MAX));
            assert_eq!(result.get_str(2, 0), None);
            assert_eq!(result.affected(), 2);
        }
    }

    #[test]
    fn a_notice_reads_as_libpq_prints_it() {
        let mut bytes = BytesMut::new();
        msg(
            &mut bytes,
            b'N',
            b"SNOTICE\0VNOTICE\0C00000\0Mhi\0Dmore\0Hdo\0\0",
        );
        msg(&mut bytes, b'C', b"DROP TABLE\0");
        msg(&mut bytes, b'Z', b"I");
        let mut response = Response::default();
        assert_eq!(feed(&mut response, &bytes, 3).unwrap(), TxStatus::Idle);
        assert_eq!(
            QueryResult {
                response: &response
            }
            .notices(),
            ["NOTICE:  hi\nDETAIL:  more\nHINT:  do"]
        );
        response.clear();
        assert!(response.notices.is_empty());
    }

    #[test]
    fn first_error_is_kept_and_reading_goes_on_to_ready_for_query() {
        let mut bytes = BytesMut::new();
        msg(&mut bytes, b'N', b"SNOTICE\0Mhello\0\0");
        error_response(&mut bytes, "ERROR", "22012", "division by zero");
        msg(&mut bytes, b'S', b"application_name\0x\0");
        msg(&mut bytes, b'Z', b"E");
        let mut response = Response::default();
        assert_eq!(feed(&mut response, &bytes, 5).unwrap(), TxStatus::Failed);
        assert_eq!(response.notices, ["NOTICE:  hello"]);
        let error = response.error.take().unwrap();
        assert_eq!(error.sqlstate(), Some(b"22012"));
        assert!(!error.is_connection_lost());
        match error.kind {
            ErrorKind::Db {
                severity, message, ..
            } => {
                assert_eq!(severity, "ERROR");
                assert_eq!(message, "division by zero");
            }
            other => panic!("expected a Db error, got {other:?}"),
        }
    }

    #[test]
    fn detail_hint_and_context_are_kept_only_when_sent() {
        let mut bytes = BytesMut::new();
        let body = b"SERROR\0VERROR\0C40001\0Mboom\0Dd1\0Hh1\0WPL/pgSQL line 1\0\0";
        msg(&mut bytes, b'E', body);
        msg(&mut bytes, b'Z', b"E");
        let mut response = Response::default();
        feed(&mut response, &bytes, 7).unwrap();
        let more = response.error.take().unwrap().more().cloned();
        assert_eq!(
            more,
            Some(crate::DbMore {
                detail: Some("d1".into()),
                hint: Some("h1".into()),
                context: Some("PL/pgSQL line 1".into()),
                position: None,
            })
        );
        let mut bytes = BytesMut::new();
        error_response(&mut bytes, "ERROR", "22012", "division by zero");
        msg(&mut bytes, b'Z', b"E");
        feed(&mut response, &bytes, 64).unwrap();
        assert!(response.error.take().unwrap().more().is_none());
    }

    #[test]
    fn fatal_errors_mean_the_session_is_lost() {
        let mut bytes = BytesMut::new();
        error_response(&mut bytes, "FATAL", "57P01", "terminating connection");
        msg(&mut bytes, b'Z', b"I");
        let mut response = Response::default();
        feed(&mut response, &bytes, 64).unwrap();
        assert!(response.error.unwrap().is_connection_lost());
    }

    #[test]
    fn command_tags_give_the_affected_count() {
        assert_eq!(affected_from_tag(b"INSERT 0 5"), 5);
        assert_eq!(affected_from_tag(b"UPDATE 1"), 1);
        assert_eq!(affected_from_tag(b"DELETE 0"), 0);
        assert_eq!(affected_from_tag(b"BEGIN"), 0);
        assert_eq!(affected_from_tag(b""), 0);
    }

    #[test]
    fn reusing_a_response_forgets_the_previous_rows() {
        let mut first = BytesMut::new();
        data_row(&mut first, &[Some("1")]);
        msg(&mut first, b'C', b"SELECT 1\0");
        msg(&mut first, b'Z', b"I");
        let mut second = BytesMut::new();
        msg(&mut second, b'C', b"UPDATE 3\0");
        msg(&mut second, b'Z', b"I");
        let mut response = Response::default();
        feed(&mut response, &first, 64).unwrap();
        feed(&mut response, &second, 64).unwrap();
        let result = QueryResult {
            response: &response,
        };
        assert_eq!((result.rows(), result.affected()), (0, 3));
        assert_eq!(result.get_str(0, 0), None);
    }

    #[test]
    fn unknown_status_and_copy_in_are_protocol_errors() {
        let mut bytes = BytesMut::new();
        msg(&mut bytes, b'Z', b"?");
        let mut response = Response::default();
        assert!(matches!(
            feed(&mut response, &bytes, 64).unwrap_err().kind,
            ErrorKind::Protocol(_)
        ));
        let mut bytes = BytesMut::new();
        msg(&mut bytes, b'G', &[0, 0, 0]);
        assert!(matches!(
            feed(&mut response, &bytes, 64).unwrap_err().kind,
            ErrorKind::Protocol(_)
        ));
    }
}
