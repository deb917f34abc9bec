//! Rows of pgbench's tables in PostgreSQL's binary COPY format, built into reusable buffers.
//!
//! Binary rather than text: the server then skips line splitting and integer parsing, which
//! is most of its COPY work here (the row values are trivial). Format: PostgreSQL docs,
//! "COPY — Binary Format". Row contents follow pgbench 15's client-side generation: balances
//! 0, `bid` derived from the key, `filler` NULL in branches and tellers, and the empty string
//! in accounts (which char(84) pads with blanks).

use bytes::{BufMut, Bytes, BytesMut};

use super::schema::{ACCOUNTS_PER_SCALE, TELLERS_PER_SCALE};

/// Signature, flags (no OIDs), header extension length.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// Field count -1 ends the data.
const TRAILER: i16 = -1;

/// Bytes handed to the server per CopyData message batch: large enough that per-message
/// overhead vanishes, small enough to keep memory flat and progress smooth.
pub const CHUNK_BYTES: usize = 256 * 1024;

/// The binary COPY stream of pgbench_accounts rows `first..=last`, chunk by chunk.
pub struct AccountRows {
    next: i64,
    last: i64,
    big_aid: bool,
    started: bool,
    finished: bool,
    buf: BytesMut,
}

impl AccountRows {
    pub fn new(first: i64, last: i64, big_aid: bool) -> AccountRows {
        AccountRows {
            next: first,
            last,
            big_aid,
            started: false,
            finished: false,
            buf: BytesMut::with_capacity(CHUNK_BYTES + 64),
        }
    }

    /// The next chunk and the number of rows in it; `None` once the trailer has been returned.
    /// The buffer's memory is reused once the server side has let go of the previous chunk.
    pub fn next_chunk(&mut self) -> Option<(Bytes, u64)> {
        if self.finished {
            return None;
        }
        self.buf.reserve(CHUNK_BYTES + 64);
        if !self.started {
            self.buf.put_slice(HEADER);
            self.started = true;
        }
        let mut rows = 0u64;
        while self.next <= self.last && self.buf.len() < CHUNK_BYTES {
            let aid = self.next;
            self.buf.put_i16(4);
            if self.big_aid {
                self.buf.put_i32(8);
                self.buf.put_i64(aid);
            } else {
                self.buf.put_i32(4);
                // Lossless: below SCALE_64BIT_AID every aid fits an int4.
                self.buf.put_i32(aid as i32);
            }
            self.buf.put_i32(4);
            self.buf
                .put_i32(((aid - 1) / ACCOUNTS_PER_SCALE + 1) as i32);
            self.buf.put_i32(4);
            self.buf.put_i32(0);
            // Empty filler: bpchar's receive function pads it to 84 blanks, as pgbench's ''.
            self.buf.put_i32(0);
            self.next += 1;
            rows += 1;
        }
        if self.next > self.last {
            self.buf.put_i16(TRAILER);
            self.finished = true;
        }
        Some((self.buf.split().freeze(), rows))
    }
}

/// The whole binary COPY stream of pgbench_branches at `scale` (small: one row per scale).
pub fn branches(scale: u32) -> Bytes {
    let mut buf = BytesMut::with_capacity(HEADER.len() + 2 + scale as usize * 22);
    buf.put_slice(HEADER);
    for bid in 1..=i64::from(scale) {
        buf.put_i16(3);
        buf.put_i32(4);
        buf.put_i32(bid as i32);
        buf.put_i32(4);
        buf.put_i32(0);
        buf.put_i32(-1); // filler NULL
    }
    buf.put_i16(TRAILER);
    buf.freeze()
}

/// The whole binary COPY stream of pgbench_tellers at `scale` (ten rows per scale).
pub fn tellers(scale: u32) -> Bytes {
    let n = TELLERS_PER_SCALE * i64::from(scale);
    let mut buf = BytesMut::with_capacity(HEADER.len() + 2 + n as usize * 30);
    buf.put_slice(HEADER);
    for tid in 1..=n {
        buf.put_i16(4);
        buf.put_i32(4);
        buf.put_i32(tid as i32);
        buf.put_i32(4);
        buf.put_i32(((tid - 1) / TELLERS_PER_SCALE + 1) as i32);
        buf.put_i32(4);
        buf.put_i32(0);
        buf.put_i32(-1); // filler NULL
    }
    buf.put_i16(TRAILER);
    buf.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(mut rows: AccountRows) -> (Vec<u8>, u64) {
        let mut all = Vec::new();
        let mut n = 0;
        while let Some((chunk, k)) = rows.next_chunk() {
            all.extend_from_slice(&chunk);
            n += k;
        }
        (all, n)
    }

    #[test]
    fn account_stream_is_framed_and_complete() {
        let (bytes, n) = drain(AccountRows::new(99_999, 100_002, false));
        assert_eq!(n, 4);
        assert!(bytes.starts_with(b"PGCOPY\n\xff\r\n\0"));
        assert_eq!(bytes.len(), HEADER.len() + 4 * 30 + 2);
        assert_eq!(&bytes[bytes.len() - 2..], &[0xff, 0xff]);
        // Row 3 is aid 100001, the first account of branch 2.
        let row = &bytes[HEADER.len() + 2 * 30..HEADER.len() + 3 * 30];
        assert_eq!(&row[6..10], &100_001i32.to_be_bytes());
        assert_eq!(&row[14..18], &2i32.to_be_bytes());
    }

    #[test]
    fn big_aid_rows_carry_int8() {
        let (bytes, n) = drain(AccountRows::new(1, 1, true));
        assert_eq!(n, 1);
        assert_eq!(bytes.len(), HEADER.len() + 34 + 2);
    }

    #[test]
    fn large_ranges_come_in_bounded_chunks() {
        let mut rows = AccountRows::new(1, 100_000, false);
        let mut total = 0;
        while let Some((chunk, k)) = rows.next_chunk() {
            assert!(chunk.len() <= CHUNK_BYTES + 64);
            total += k;
        }
        assert_eq!(total, 100_000);
    }
}
