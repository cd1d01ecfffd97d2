"""Numbered schema migrations, recorded in ``_migrations`` (llm's ``@migration`` pattern).

Add a new ``mNNN_...`` function at the end; never edit one that has shipped. New columns go at the end of a table.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb

MIGRATIONS: list[tuple[str, Callable[[duckdb.DuckDBPyConnection], None]]] = []


def migration(fn: Callable[[duckdb.DuckDBPyConnection], None]):
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_core(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY,
            flow VARCHAR NOT NULL,
            parent_run_id VARCHAR,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP,
            status VARCHAR NOT NULL,          -- running | ok | partial | failed | crashed
            config JSON,
            versions JSON,
            summary JSON,
            error VARCHAR
        );
        CREATE TABLE errors (
            run_id VARCHAR NOT NULL,
            stage VARCHAR NOT NULL,           -- ingest | questions | detect | arbiter | generate | eval
            subject VARCHAR NOT NULL,         -- file path, 'questions.jsonl:17', question id
            error VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT now()
        );
        CREATE TABLE documents (
            path VARCHAR PRIMARY KEY,         -- absolute path of the file
            doc_id VARCHAR,                   -- sha256 of the bytes (NULL when unreadable)
            run_id VARCHAR NOT NULL,
            n_bytes BIGINT,
            pages INTEGER,
            has_outline BOOLEAN,
            toc_source VARCHAR,               -- outline | headings | pages
            n_lines INTEGER,
            n_sections INTEGER,
            status VARCHAR NOT NULL,          -- ok | failed | missing
            error VARCHAR,
            parser_version VARCHAR,
            ingested_at TIMESTAMP NOT NULL
        );
        CREATE TABLE lines (
            run_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            line_no INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            bbox DOUBLE[] NOT NULL,
            font_size DOUBLE NOT NULL,
            bold BOOLEAN NOT NULL,
            block_no INTEGER NOT NULL,
            PRIMARY KEY (doc_id, line_no)
        );
        CREATE TABLE toc (
            run_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            section_id INTEGER NOT NULL,
            level INTEGER NOT NULL,
            title VARCHAR NOT NULL,
            page_start INTEGER NOT NULL,
            page_end INTEGER NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            parent_id INTEGER,
            source VARCHAR NOT NULL,
            PRIMARY KEY (doc_id, section_id)
        );
        CREATE TABLE questions (
            run_id VARCHAR NOT NULL,
            question_set VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            docs VARCHAR[],                   -- resolved absolute paths; NULL = whole corpus
            answer VARCHAR,
            gold_pages INTEGER[],             -- NULL = no page gold; [] = unanswerable
            labels JSON,
            keywords_primary VARCHAR[],
            keywords_secondary VARCHAR[],
            answer_shape VARCHAR,
            decomposition VARCHAR,
            intent VARCHAR,
            parser VARCHAR,
            detectors VARCHAR[],              -- detectors the dispatcher chose
            detector_rule VARCHAR,            -- why
            status VARCHAR NOT NULL,          -- loaded | detected | arbitrated | answered | failed
            error VARCHAR,
            PRIMARY KEY (run_id, question_id)
        );
        CREATE TABLE detector_hits (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            detector VARCHAR NOT NULL,
            rank INTEGER NOT NULL,
            raw_score DOUBLE NOT NULL,
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            section_id INTEGER,
            matched_keywords VARCHAR[]
        );
        CREATE TABLE candidates (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            candidate_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            section_id INTEGER,
            section VARCHAR,
            methods VARCHAR[],
            ranks JSON,
            raw_scores JSON,
            matched_keywords VARCHAR[],
            snippet VARCHAR,
            rrf_score DOUBLE NOT NULL,
            rrf_rank INTEGER NOT NULL,
            in_pool BOOLEAN NOT NULL,         -- handed to the arbiter (RRF pool cap)
            PRIMARY KEY (run_id, question_id, candidate_id)
        );
        CREATE TABLE verdicts (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            candidate_id VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            decision VARCHAR NOT NULL,
            reason VARCHAR NOT NULL,
            relevance DOUBLE NOT NULL,
            contradicts VARCHAR[],
            anchor_found BOOLEAN NOT NULL,
            rewrite VARCHAR,
            flagged BOOLEAN NOT NULL,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            call_id VARCHAR,
            PRIMARY KEY (run_id, question_id, candidate_id)
        );
        CREATE TABLE retrieval_results (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            status VARCHAR NOT NULL,          -- found | not_found | failed
            rule VARCHAR,
            result JSON,                      -- RetrievalResult
            arbiter_provider VARCHAR,
            arbiter_model VARCHAR,
            arbiter_call_id VARCHAR,
            error VARCHAR,
            PRIMARY KEY (run_id, question_id)
        );
        CREATE TABLE answers (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            regime VARCHAR NOT NULL,          -- batch | sequential
            routed BOOLEAN NOT NULL,          -- the regime the router chose (auto) for this question
            route_rule VARCHAR,
            exit VARCHAR,                     -- sufficiency | exhaustion | budget | single_call | not_found | failed
            steps INTEGER,
            value VARCHAR,
            answer JSON,                      -- AnswerWithEvidence
            answer_found BOOLEAN,
            complete_answer_found BOOLEAN,
            confidence DOUBLE,
            input_tokens BIGINT,
            cached_tokens BIGINT,
            output_tokens BIGINT,
            latency_ms DOUBLE,
            provider VARCHAR,
            model VARCHAR,
            budget JSON,
            status VARCHAR NOT NULL,          -- ok | failed
            error VARCHAR,
            PRIMARY KEY (run_id, question_id, regime)
        );
        CREATE TABLE llm_calls (
            call_id VARCHAR PRIMARY KEY,
            run_id VARCHAR NOT NULL,
            question_id VARCHAR,
            stage VARCHAR NOT NULL,           -- arbiter | generate
            regime VARCHAR,
            step INTEGER,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            request_hash VARCHAR NOT NULL,
            messages JSON,
            response VARCHAR,                 -- raw response text / body
            parsed JSON,
            input_tokens BIGINT,
            cached_tokens BIGINT,
            output_tokens BIGINT,
            reasoning_tokens BIGINT,
            tokens_counted BOOLEAN,           -- counted locally (offline provider) instead of reported
            latency_ms DOUBLE,
            status VARCHAR NOT NULL,          -- ok | error
            error VARCHAR,
            attempt INTEGER NOT NULL,
            batch_api BOOLEAN NOT NULL DEFAULT false,
            fallback_from VARCHAR,
            created_at TIMESTAMP NOT NULL
        );
        CREATE TABLE prices (
            price_version VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            effective_date DATE NOT NULL,
            input_per_mtok DOUBLE NOT NULL,
            cached_input_per_mtok DOUBLE NOT NULL,
            output_per_mtok DOUBLE NOT NULL,
            batch_input_per_mtok DOUBLE NOT NULL,
            batch_output_per_mtok DOUBLE NOT NULL,
            PRIMARY KEY (model, effective_date)
        );
        CREATE TABLE eval_results (
            run_id VARCHAR NOT NULL,
            question_set VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            method VARCHAR NOT NULL,          -- arbiter | rrf | keywords | embeddings | toc | batch | sequential | auto
            hit_at_1 BOOLEAN,
            hit_at_5 BOOLEAN,
            reciprocal_rank DOUBLE,
            predicted_pages INTEGER[],
            gold_pages INTEGER[],
            predicted_not_found BOOLEAN,
            unanswerable BOOLEAN,
            answer_correct BOOLEAN,
            input_tokens BIGINT,
            output_tokens BIGINT,
            labels JSON,
            PRIMARY KEY (run_id, question_id, method)
        );
        """
    )
