//! CSV text from serializable rows, loadable with `pandas.read_csv` as is.

use serde::Serialize;

/// The CSV text of `rows`. With `header`, that line comes first even when there are no
/// rows (so a reader always gets the columns); without, serde's field names head the
/// first row (and no rows give an empty text).
pub fn csv_bytes<R: Serialize>(
    header: Option<&[&str]>,
    rows: impl IntoIterator<Item = R>,
) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(header.is_none())
        .from_writer(Vec::new());
    if let Some(h) = header {
        w.write_record(h)?;
    }
    for row in rows {
        w.serialize(row)?;
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row {
        a: u64,
        b: &'static str,
    }

    #[test]
    fn header_first_even_without_rows() {
        let none: [Row; 0] = [];
        assert_eq!(csv_bytes(Some(&["a", "b"]), none).unwrap(), b"a,b\n");
        let none: [Row; 0] = [];
        assert!(csv_bytes(None, none).unwrap().is_empty());
        let rows = [Row { a: 1, b: "x" }, Row { a: 2, b: "y" }];
        assert_eq!(csv_bytes(None, rows).unwrap(), b"a,b\n1,x\n2,y\n");
    }
}
