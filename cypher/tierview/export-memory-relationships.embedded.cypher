// tierview/export-memory-relationships (embedded engine only): every relationship with the
// columns of tierview/memory-relationships, for `COPY (<this query>) TO <file>`. A server
// reading them into the tier walks' memory read them range by range, and every range scanned
// every relationship again (a range is a filter, not a seek); written to a file, the result
// streams out in one scan and is read as an import's staged lines are (staged-walk-memory.ts,
// addExportedRelationships). Values are in the staging's text: the date as ISO 8601 in UTC, the
// lists as the text they are stored as (a list value the engine would quote in a file), the
// confidence exact as `<m>p<s>`, m over 2^s (see edge/export, whose reasons this shares: the
// engine writes a DOUBLE with six decimals, and a query carrying a node through WITH fails in an
// export).
MATCH (s:Company)-[r:SUPPLIES]->(c:Company)
WITH offset(id(s)) AS sup, offset(id(c)) AS cus, r.edge_id AS edge_id, r.confidence_score AS confidence,
     r.status_code AS status_code, r.hs_codes AS hs_codes, r.evidence_types AS evidence_types,
     r.latest_edge_date AS latest,
     60 - cast(floor(log2(abs(r.confidence_score) + CASE WHEN r.confidence_score = 0 THEN 1 ELSE 0 END)) AS INT64) AS e
RETURN sup AS s, cus AS c, edge_id,
       CASE WHEN confidence IS NULL THEN NULL
            ELSE concat(cast(cast(confidence * pow(2.0, e - e / 2) * pow(2.0, e / 2) AS INT64) AS STRING), 'p',
                        cast(e AS STRING)) END AS confidence_score,
       status_code, hs_codes, evidence_types,
       CASE WHEN latest IS NULL THEN NULL
            ELSE concat(regexp_replace(cast(latest AS STRING), ' ', 'T'), 'Z') END AS latest
