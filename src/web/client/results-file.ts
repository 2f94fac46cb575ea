/** The parts of a check's result file (GET of its JSON link) the Results view reads. */
import type { ResultRecord } from './table';

export interface ResultFile {
  summary?: {
    total_working?: number;
    countries?: Record<string, number>;
    anonymity_levels?: Record<string, number>;
    top_isps?: Record<string, number>;
    protocols?: Record<string, number>;
    rotating?: number;
    errors?: Record<string, number>;
  };
  metadata?: Record<string, unknown>;
  proxies?: ResultRecord[];
  custom_url_validation?: { per_url_summary?: { url: string; success_count: number; failed_count: number; success_rate: string }[] };
}
