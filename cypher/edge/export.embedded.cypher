// edge/export (embedded engine only): every edge with the columns of edge/range, in the
// order of the import's Edge staging lines, for `COPY (<this query>) TO <file>`. A server
// writing its point-read file with the edges read them range by range, and every range
// scanned every edge's columns again (some 140 s at 5.1M edges); written to a file, the
// result streams out in one scan, and the file becomes the point-read file's edges as an
// import's staging file does (staged-point-file.ts, stageExportedEdges). Values are in the
// staging's text: timestamps as ISO 8601 in UTC (the lists are stored as their text, as
// staged, and the engine would quote a list value in a file). The engine writes a DOUBLE, and casts it to
// text, with six decimals only, so the confidence goes out exact as `<m>p<s>`, the integer m
// over 2^s: scaled by a power of two (exact) to a magnitude between 2^59 and 2^62, the scale
// split in two so that neither factor overflows for the smallest doubles (zero, whose log the
// engine would not cast, is scaled as one is: the engine computes both sides of a CASE). An
// export's query that carries a node through WITH fails in the engine, so only values do.
MATCH (e:Edge)
WITH e.edge_id AS edge_id, e.supplier_id AS supplier_id, e.customer_id AS customer_id, e.label AS label,
     e.status_code AS status_code, e.latest_edge_date AS latest, e.latest_finalized_edge_date AS finalized,
     e.last_modified_on AS modified, e.confidence_score AS confidence, e.hs_codes AS hs_codes, e.evidences AS evidences,
     60 - cast(floor(log2(abs(e.confidence_score) + CASE WHEN e.confidence_score = 0 THEN 1 ELSE 0 END)) AS INT64) AS s
RETURN edge_id, supplier_id, customer_id, label, status_code,
       CASE WHEN latest IS NULL THEN NULL
            ELSE concat(regexp_replace(cast(latest AS STRING), ' ', 'T'), 'Z') END AS latest_edge_date,
       CASE WHEN finalized IS NULL THEN NULL
            ELSE concat(regexp_replace(cast(finalized AS STRING), ' ', 'T'), 'Z') END AS latest_finalized_edge_date,
       CASE WHEN modified IS NULL THEN NULL
            ELSE concat(regexp_replace(cast(modified AS STRING), ' ', 'T'), 'Z') END AS last_modified_on,
       CASE WHEN confidence IS NULL THEN NULL
            ELSE concat(cast(cast(confidence * pow(2.0, s - s / 2) * pow(2.0, s / 2) AS INT64) AS STRING), 'p',
                        cast(s AS STRING)) END AS confidence_score,
       hs_codes, evidences
