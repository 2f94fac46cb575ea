/** placeholder */
import type { Env, ScenarioOutput } from './scenarios';
export async function writeReport(_o: { results: Record<string, ScenarioOutput>; firstStartMs: number; startups: number[]; scale: number; env: Env }): Promise<string[]> {
  return [];
}
