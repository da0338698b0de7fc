/** The shared bounded polling helper (test/support/eventually.ts), kept here for the rollout tests' imports. */
export { eventually } from '../../support/eventually';
