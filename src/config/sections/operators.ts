/**
 * `operators`: the named people who vote on approvals and log in to the operator console. Each entry is checked
 * against `operatorSchema`; names are unique.
 */
import { fail, validateEntry } from '../fail';
import { section, type Infer } from '../setting';

/** `approver` votes on approvals; `admin` also halts keys and resumes halts in the console. */
export const OPERATOR_ROLES = ['approver', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

export const operatorsSchema = section({
  operators: {
    doc: "Named operators who vote on approvals, a list of {name, role} (role `approver` or `admin`); each key's `approvals` names whose votes it counts. []: the host's operator decides alone (`approvals approve ID`). Each logs in to the operator console with a passkey from `sa-forge-signer operator enroll NAME` (docs/operators.md).",
    format: 'object-list',
    default: [],
  },
});

/** One entry of `operators:`. */
export const operatorSchema = section({
  name: {
    doc: "The operator's name ([a-z0-9_-]{1,32}), unique: what votes, `approvals approve --as` and the audit show.",
    format: 'non-empty-string',
    default: null,
  },
  role: {
    doc: '`approver` (votes on approvals) or `admin` (also halts keys and resumes halts in the operator console).',
    format: [...OPERATOR_ROLES],
    default: 'approver',
  },
});

/** A named operator (config `operators`): whose votes an approval counts. */
export type OperatorConfig = Infer<typeof operatorSchema>;

const OPERATOR_NAME = /^[a-z0-9_-]{1,32}$/;

export function buildOperators(list: readonly unknown[]): OperatorConfig[] {
  const operators: OperatorConfig[] = [];
  for (const [i, item] of list.entries()) {
    const o = validateEntry(operatorSchema, item, `operators[${i}]`);
    if (!OPERATOR_NAME.test(o.name))
      fail(`operators[${i}].name: ${JSON.stringify(o.name)}: use 1 to 32 lowercase letters, digits, '-' or '_'`);
    if (operators.some((x) => x.name === o.name))
      fail(`operators[${i}].name: ${JSON.stringify(o.name)} is listed twice; operator names must be unique`);
    operators.push({ name: o.name, role: o.role });
  }
  return operators;
}
