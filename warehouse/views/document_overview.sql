-- One row per document: who sent it, what it is, how many shipments and containers it covers, and
-- the document schema its extraction follows (matched by the document's type and the extraction's
-- public schema_version; NULL until that schema is pulled).
CREATE OR REPLACE VIEW document_overview AS
SELECT
    d.id AS document_id,
    d.name,
    d.document_type,
    coalesce(d.document_type_manual, d.document_type) AS effective_document_type,
    d.source,
    d.file_name,
    d.file_size_bytes,
    d.created_at,
    d.account_id,
    a.company_name AS account_name,
    (SELECT count(*) FROM document_shipments s WHERE s.document_id = d.id) AS shipment_count,
    (SELECT count(*) FROM document_containers c WHERE c.document_id = d.id) AS container_count,
    r.schema_version AS extracted_schema_version,
    (SELECT min(s.id) FROM document_schemas s
     WHERE s.document_type = coalesce(d.document_type_manual, d.document_type)
       AND s.schema_version = r.schema_version) AS extracted_with_schema
FROM documents d
LEFT JOIN accounts a ON a.id = d.account_id
LEFT JOIN document_representations r ON r.id = d.last_document_representation_id;
