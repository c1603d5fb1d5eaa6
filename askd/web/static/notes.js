// What a closed panel's note says, in the reader's language: who answered
// or declined it, why else it closed, and the default a timeout applied.

import { revealText } from './hidden.js';
import { formatList, t } from './i18n.js';
import { summary } from './markdown.js';

// Why a panel closed: each has a style `note-<reason>`; `noteText` picks its words.
export const NOTES = new Set(['answered', 'declined', 'timeout', 'cancelled', 'reassigned', 'not_pending', 'gone']);

/**
 * What a closed panel says: who answered or declined it (askd's answeredBy,
 * null for an admin without a name), or why else it closed.
 */
export function noteText(panel, closed, me) {
  const { reason, answeredBy: by, declineReason } = closed;
  if (panel.action) return actionText(panel, closed, me);
  if (reason === 'answered') {
    if (panel.answeredHere) return t('note.answeredHere');
    if (by === null) return t('note.answeredByAdmin');
    if (by === undefined || by === me) return t('note.answered'); // this user, in another tab
    return t('note.answeredBy', { name: by });
  }
  if (reason === 'declined') {
    if (panel.declinedHere) return t('note.declinedHere');
    if (by === me && by !== undefined) return t('note.declinedByYou');
    const withReason = declineReason ? 'Reason' : '';
    if (by === null || by === undefined) return t(`note.declinedByAdmin${withReason}`, { reason: declineReason });
    return t(`note.declinedBy${withReason}`, { name: by, reason: declineReason });
  }
  if (reason === 'timeout' && closed.defaulted && closed.answers) {
    return t('note.timeoutDefault', { answer: defaultText(panel, closed.answers) });
  }
  return t(`note.${NOTES.has(reason) ? reason : 'cancelled'}`);
}

/** An approval's end, in its own words: approved, denied (a decline denies an action). */
function actionText(panel, { reason, answeredBy: by, declineReason }, me) {
  const mine = by === me && by !== undefined;
  if (reason === 'answered') {
    if (panel.answeredHere) return t('note.approvedHere');
    if (by === null) return t('note.approvedByAdmin');
    return by === undefined || mine ? t('note.approved') : t('note.approvedBy', { name: by });
  }
  if (reason === 'declined') {
    if (panel.declinedHere) return t('note.deniedHere');
    if (mine) return t('note.deniedByYou');
    const withReason = declineReason ? 'Reason' : '';
    if (by === null || by === undefined) return t(`note.deniedByAdmin${withReason}`, { reason: declineReason });
    return t(`note.deniedBy${withReason}`, { name: by, reason: declineReason });
  }
  return t(`note.${NOTES.has(reason) ? reason : 'cancelled'}`);
}

/** The default a timeout applied: the answer alone for one question, else "question: answer; ..." (hidden characters as marks). */
function defaultText(panel, answers) {
  const shown = (value) => revealText(Array.isArray(value) ? formatList(value) : String(value));
  const entries = Object.entries(answers);
  if (entries.length === 1 && panel.fields.length === 1) return shown(entries[0][1]);
  const titleOf = new Map(panel.fields.map((f) => [f.question, f.header || summary(f.question) || f.question]));
  return entries.map(([question, value]) => `${revealText(titleOf.get(question) ?? question)}: ${shown(value)}`).join('; ');
}
